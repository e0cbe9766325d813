"""Sending one stimulus: within a deadline, with its CPU measured, and never raising.

The adapter, the executive and the sidecar all send stimuli through here, so an organ that
hangs, raises instead of answering, or does not measure its own CPU is handled the same way
everywhere.
"""

from __future__ import annotations

import asyncio
import logging
import time

from colonnade.organs.cpu import CpuMeter
from colonnade.organs.protocol import Organ
from colonnade.organs.stimulus import INTERNAL, TIMEOUT, Response, Stimulus

__all__ = ["send"]

logger = logging.getLogger("colonnade.organs")


async def send(organ: Organ, stimulus: Stimulus, *, timeout_s: float | None = None) -> Response:
    """The organ's response; `Timeout` past `timeout_s`, `Internal` if the organ raised."""
    started = time.perf_counter()
    meter = CpuMeter()
    try:
        async with asyncio.timeout(timeout_s):
            response = await meter.run(organ.stimulate(stimulus))
    except TimeoutError:
        return Response.failure(
            TIMEOUT,
            f"the organ did not answer '{stimulus.op}' within {timeout_s:g} s",
            latency_ms=_since(started),
            timeout_s=timeout_s,
        )
    except Exception as exc:  # the organ broke its contract by raising; reported by type only
        logger.exception("an organ raised instead of answering '%s'", stimulus.op)
        return Response.failure(
            INTERNAL,
            f"the organ raised {type(exc).__name__} instead of answering '{stimulus.op}'",
            latency_ms=_since(started),
            op=stimulus.op,
        )
    if response.cpu_ms is None:
        response = response.model_copy(update={"cpu_ms": round(meter.ms, 3)})
    if not response.latency_ms:
        response = response.model_copy(update={"latency_ms": _since(started)})
    return response


def _since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)
