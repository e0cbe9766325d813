"""Chaos: 1,000 calls with mixed faults through the whole pipeline against the real fault backend.

Every result has one of the four statuses and (unless success) a registered taxonomy code;
idempotent calls with transient faults succeed within their retry budget; keyed side-effectful
calls execute at most once by the backend's ledger (exactly once when they report success); no
call outlives its deadline by more than 250 ms plus twice the event loop's worst lag in the run.
That bound is generous on purpose: a late call's tail (cancel, audit write in SQLite's thread, answer)
meets the machine's lateness more than once on a busy machine, and the bound still fails a pipeline
that ignores deadlines (slow faults run up to 1.5 s past them). The deadline's precision is checked by
one call at a time in test_retries_and_deadlines.py::test_slow_backend_is_cut_at_the_deadline.
"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import random
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest

from colonnade.calls.call_errors import REGISTRY
from colonnade.calls.envelope import CallConstraints, CallResult, CallStatus, RetryPolicy
from colonnade.store import create_store_engine, migrate_engine
from tests.calls.conftest import Harness, build_harness
from tests.support.loop_lag import loop_lag

CALLS = 1_000
CONCURRENCY = 32
POLICY = RetryPolicy(max_attempts=3, base_ms=5, cap_ms=40, jitter="full")
TRANSIENT = ["503", "cut", "429:0", "500"]  # 500 is terminal, so only the first three are transient
RETRYABLE_TRANSIENT = ["503", "cut", "429:0"]
TRANSIENT_ROOM_MS = 1_000


@dataclass
class Plan:
    tool: str
    fault: str
    input: dict[str, Any]
    timeout_ms: int
    key: str | None
    idempotent: bool


def _plan(rng: random.Random, n: int) -> Plan:
    kind = rng.choice(
        ["read_transient", "read_broken", "put_transient", "effect_keyed", "effect_bare", "slow", "bad"]
    )
    timeout_ms = rng.randint(300, 1_000)
    attempt_key = f"chaos-{n}"
    # A transient fault must be retried to success within the deadline: three attempts under 32
    # concurrent calls on a loaded 2-core machine were seen to need more than 356 ms.
    retry_room_ms = timeout_ms + TRANSIENT_ROOM_MS
    if kind == "read_transient":
        fault = f"flaky:{rng.randint(1, 2)}:{rng.choice(RETRYABLE_TRANSIENT)}"
        return Plan(
            "get_item", fault, {"item_id": "I-1", "attempt_key": attempt_key}, retry_room_ms, None, True
        )
    if kind == "read_broken":
        fault = rng.choice(["malformed", "bad_output", "500", "503"])
        return Plan(
            "get_item", fault, {"item_id": "I-2", "attempt_key": attempt_key}, timeout_ms, None, False
        )
    if kind == "put_transient":
        fault = f"flaky:1:{rng.choice(RETRYABLE_TRANSIENT)}"
        data = {"item_id": f"P-{n % 7}", "value": str(n), "attempt_key": attempt_key}
        return Plan("put_item", fault, data, retry_room_ms, None, True)
    if kind == "effect_keyed":
        fault = f"flaky:{rng.randint(1, 2)}:{rng.choice(['503', 'cut', 'cut_after_effect'])}"
        return Plan(
            "create_effect", fault, {"note": str(n), "attempt_key": attempt_key}, timeout_ms, f"k-{n}", False
        )
    if kind == "effect_bare":
        fault = rng.choice(["ok", "503", "cut_after_effect"])
        return Plan(
            "create_effect", fault, {"note": str(n), "attempt_key": attempt_key}, timeout_ms, None, False
        )
    if kind == "slow":
        fault = f"slow:{rng.randint(50, 1_500)}"
        return Plan(
            "get_item", fault, {"item_id": "I-1", "attempt_key": attempt_key}, timeout_ms, None, False
        )
    return Plan("get_item", "ok", {"item_id": 42, "attempt_key": attempt_key}, timeout_ms, None, False)


def _withheld_success(result: CallResult) -> bool:
    err = result.error
    unrecorded = err is not None and err.code == "R-TIMEOUT-UNRECORDED"
    return unrecorded and err is not None and err.details.get("withheld_status") == "success"


@pytest.fixture
async def sqlite_harness(tmp_path: Path, fault_url: str) -> AsyncIterator[Harness]:
    engine = create_store_engine(f"sqlite+aiosqlite:///{tmp_path / 'chaos.db'}")
    await migrate_engine(engine)
    httpx2.post(f"{fault_url}/reset")
    httpx2.post(f"{fault_url}/health/up")
    harness, built = await build_harness(engine, fault_url)
    yield harness
    await built.aclose()
    await engine.dispose()


@pytest.fixture
def settled_heap() -> Iterator[None]:
    """Objects left by earlier tests are frozen, so a full GC pass in the middle cannot stall the loop.

    In one long pytest process the heap holds every earlier test's leftovers; a gateway process does not.
    """
    gc.collect()
    gc.freeze()
    yield
    gc.unfreeze()


@pytest.mark.usefixtures("settled_heap")
async def test_thousand_calls_with_mixed_faults(sqlite_harness: Harness) -> None:
    rng = random.Random(20261122)
    plans = [_plan(rng, n) for n in range(CALLS)]
    gate = asyncio.Semaphore(CONCURRENCY)

    async def run(plan: Plan) -> tuple[Plan, CallResult, float]:
        async with gate:
            arguments = dict(plan.input, fault=plan.fault) if plan.fault != "ok" else dict(plan.input)
            constraints = CallConstraints(
                timeout_ms=plan.timeout_ms, idempotency_key=plan.key, retry_policy=POLICY
            )
            started = time.perf_counter()
            result = await sqlite_harness.call(plan.tool, input=arguments, constraints=constraints)
            return plan, result, (time.perf_counter() - started) * 1000

    async with loop_lag() as lag:
        outcomes = await asyncio.gather(*(run(p) for p in plans))

    statuses = Counter(result.status for _, result, _ in outcomes)
    assert set(statuses) <= {
        CallStatus.SUCCESS,
        CallStatus.RETRYABLE_ERROR,
        CallStatus.TERMINAL_ERROR,
        CallStatus.INVALID_REQUEST,
    }
    for plan, result, _ in outcomes:
        if result.status is not CallStatus.SUCCESS:
            assert result.error is not None and result.error.code in REGISTRY, (plan, result)
            assert REGISTRY[result.error.code].status is result.status
    slack_ms = 250 + 2 * lag.worst_ms  # the loop's own lateness on a loaded machine is not the pipeline's
    late = [(plan, elapsed) for plan, _, elapsed in outcomes if elapsed > plan.timeout_ms + slack_ms]
    assert late == [], f"{len(late)} calls outlived their deadline by > {slack_ms:.0f} ms: " + ", ".join(
        f"{p.tool}/{p.fault}/key={p.key is not None}: {e - p.timeout_ms:.0f} ms over" for p, e in late[:10]
    )
    # A retried transient fault is healed: success, or (on a loaded machine) a success whose audit record
    # was still being written when the deadline came, answered R-TIMEOUT-UNRECORDED with what it withheld.
    failed_transient = [
        (plan, result.error)
        for plan, result, _ in outcomes
        if plan.idempotent and not result.ok and not _withheld_success(result)
    ]
    assert failed_transient == []

    ledger = httpx2.get(f"{sqlite_harness.fault_url}/ledger").json()["ledger"]
    effects = Counter(entry["key"] for entry in ledger if entry["kind"] == "effect" and entry["key"])
    keyed = [(plan, result) for plan, result, _ in outcomes if plan.key is not None]
    assert keyed and all(effects[_backend_key(plan)] <= 1 for plan, _ in keyed)  # at most once
    assert all(effects[_backend_key(plan)] == 1 for plan, result in keyed if result.ok)
    assert statuses[CallStatus.SUCCESS] > CALLS // 3


def _backend_key(plan: Plan) -> str:
    """The Idempotency-Key the gateway forwards for this plan (scoped: tenant|tool|principal)."""
    scope = "chaos|chaos:faults:create_effect|anonymous:loopback"
    return "cln-" + hashlib.sha256(f"{scope}\0{plan.key}".encode()).hexdigest()[:40]
