"""Why a Rego decision costs more inside a gateway than in a loop: the experiments (issue 14).

`bench/policy_eval.py` shows the gap (one decision in a loop, the same decision inside a serving
gateway, and in a loop after busy-waits). This script holds the experiments that tell its cause,
all on the decision `policy_eval.py` times (its policy set, principal, tool and arguments), in
one process, their variants taking turns so that all see the same machine:

- what comes before a decision: another decision, a busy-wait (touches no memory), a sleep
  (the core is left to others), or a walk over N bytes of memory (evicts that much of the
  caches); with the thread's context switches and minor page faults per decision;
- other work of about the same length after the same gap (a control: is it the decision's own
  doing, or any code whose caches went cold?);
- whether a decision gets dearer with the number taken (the interpreter's state growing):
  CPU and resident memory per block of decisions, each with arguments never seen before.

Allocator hypotheses are tried by running it under another allocator set-up, e.g.
`MALLOC_ARENA_MAX=1`, `GLIBC_TUNABLES=glibc.malloc.hugetlb=1` or
`LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2` (an experiment only).

Run: .venv/bin/python bench/policy_cold.py [--rounds 300] [--growth 5000]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from policy_eval import AGENT, ARGUMENTS, USER_RULE, _busy_wait, _demo_tool

from colonnade.governance.policy.gate import PolicyGate
from colonnade.governance.policy.input_document import policy_input
from colonnade.governance.policy.sources import SHIPPED_POLICIES
from colonnade.observability.logging import configure_logging

Work = Callable[[], object]
_TOUCH_SIZES = (256 << 10, 2 << 20, 8 << 20, 32 << 20, 64 << 20)


def _gate(user_dir: Path) -> PolicyGate:
    (user_dir / "user.rego").write_text(USER_RULE)
    directories = (SHIPPED_POLICIES, SHIPPED_POLICIES / "examples", user_dir)
    gate = PolicyGate(directories, time_zones={"acme": "Europe/Paris"}, isolate=False)
    assert gate.load()
    return gate


def _walker(size: int) -> Work:
    """Writes one byte per 64-byte line of a buffer of `size` bytes."""
    buffer, zeros = bytearray(size), bytes(len(range(0, size, 64)))

    def walk() -> None:
        buffer[::64] = zeros

    return walk


def _before_a_decision(decide: Work, rounds: int) -> None:
    befores: dict[str, Work] = {
        "another decision": decide,
        "a busy-wait of 1 ms": lambda: _busy_wait(1),
        "a busy-wait of 5 ms": lambda: _busy_wait(5),
        "a busy-wait of 20 ms": lambda: _busy_wait(20),
        "a sleep of 5 ms": lambda: time.sleep(0.005),
        **{f"a walk over {size >> 10} KiB": _walker(size) for size in _TOUCH_SIZES},
    }
    cpu: dict[str, list[float]] = {label: [] for label in befores}
    switches: dict[str, list[int]] = {label: [] for label in befores}
    faults: dict[str, list[int]] = {label: [] for label in befores}
    labels = list(befores)
    for _ in range(rounds):
        random.shuffle(labels)
        for label in labels:
            befores[label]()
            usage = resource.getrusage(resource.RUSAGE_THREAD)
            started = time.thread_time_ns()
            decide()
            cpu[label].append((time.thread_time_ns() - started) / 1e6)
            after = resource.getrusage(resource.RUSAGE_THREAD)
            switches[label].append(after.ru_nvcsw + after.ru_nivcsw - usage.ru_nvcsw - usage.ru_nivcsw)
            faults[label].append(after.ru_minflt - usage.ru_minflt)
    base = statistics.median(cpu["another decision"])
    print(f"one decision after ..., CPU median ms ({rounds} each, in turns):")
    for label in befores:
        median = statistics.median(cpu[label])
        print(
            f"  {label:26s} {median:7.3f}  x{median / base:4.2f}   context switches "
            f"{statistics.mean(switches[label]):.2f}, minor faults {statistics.mean(faults[label]):.2f}"
        )


def _controls(decide: Work, rounds: int) -> None:
    document = policy_input(AGENT, _demo_tool(), ARGUMENTS, time_zones={"acme": "Europe/Paris"})
    text = json.dumps(document)
    db = sqlite3.connect(":memory:")
    db.execute("create table t (n integer, body text)")
    works: dict[str, Work] = {
        "PolicyGate.decide": decide,
        "a tight loop (sum of 3000 ints)": lambda: sum(range(3000)),
        "json dumps+loads of the input x20": lambda: [json.loads(json.dumps(document)) for _ in range(20)],
        "SQLite insert+select x40": lambda: [
            db.execute("insert into t values (?, ?)", (n, text)).fetchall() for n in range(40)
        ],
    }
    warm: dict[str, list[float]] = {label: [] for label in works}
    cold: dict[str, list[float]] = {label: [] for label in works}
    labels = list(works)
    for _ in range(rounds):
        random.shuffle(labels)
        for label in labels:
            _busy_wait(20)
            for into in (cold, warm):
                started = time.thread_time_ns()
                works[label]()
                into[label].append((time.thread_time_ns() - started) / 1e6)
    print(f"controls: right after itself / after a busy-wait of 20 ms, CPU median ms ({rounds} each):")
    for label in works:
        hot, after = statistics.median(warm[label]), statistics.median(cold[label])
        print(f"  {label:34s} {hot:7.3f} / {after:7.3f}  x{after / hot:4.2f}")


def _growth(gate: PolicyGate, per_block: int, blocks: int = 6) -> None:
    tool = _demo_tool()
    print(f"decisions taken in a row, each with new arguments ({per_block} per block):")
    for block in range(blocks):
        resident = _resident_kib()
        cpu = []
        for n in range(per_block):
            arguments = {"customer_id": f"C-{block}-{n}"}
            started = time.thread_time_ns()
            gate.decide(AGENT, tool, arguments)
            cpu.append((time.thread_time_ns() - started) / 1e6)
        grown = _resident_kib() - resident
        print(
            f"  {block * per_block:7d}-{(block + 1) * per_block - 1:7d}: CPU median "
            f"{statistics.median(cpu):.3f} ms, resident {_resident_kib()} KiB ({grown:+d})"
        )


def _resident_kib() -> int:
    return int(Path("/proc/self/statm").read_text().split()[1]) * resource.getpagesize() // 1024


def main(rounds: int, growth: int) -> None:
    configure_logging("warning")
    with tempfile.TemporaryDirectory(prefix="colonnade-policy-cold-") as name:
        gate = _gate(Path(name))
        tool = _demo_tool()

        def decide() -> object:
            return gate.decide(AGENT, tool, ARGUMENTS)

        for _ in range(200):
            decide()
        _before_a_decision(decide, rounds)
        _controls(decide, max(50, rounds // 2))
        if growth:
            _growth(gate, growth)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=300, help="decisions per variant")
    parser.add_argument("--growth", type=int, default=5000, help="decisions per block (0: skip)")
    arguments = parser.parse_args()
    main(arguments.rounds, arguments.growth)
