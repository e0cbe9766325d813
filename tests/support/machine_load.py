"""How busy the machine is, so waits for other processes scale with it instead of failing under load.

A gateway process that imports in 3 s on an idle laptop took 25 s on a shared 2-core machine with
both cores busy. A fixed start-up wait is then a test of the machine. `patient(30)` is 30 s on an
idle machine and grows with the run queue (the 1-minute load average over the cores we may use),
up to four times; the wait is for something that either comes or fails with its log, so a longer
wait on a busy machine weakens no check.
"""

from __future__ import annotations

import os

__all__ = ["load_factor", "patient"]

_MOST = 4.0


def load_factor() -> float:
    """The run queue over the usable cores: 1.0 on an idle machine, 3.0 when three want each core."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1.0, os.getloadavg()[0] / cores)


def patient(seconds: float) -> float:
    """`seconds` scaled by the machine's load, at most four times."""
    return seconds * min(_MOST, load_factor())
