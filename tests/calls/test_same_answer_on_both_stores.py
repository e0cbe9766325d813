"""One situation, one answer, on SQLite and on PostgreSQL, and the resend agrees with it.

A payment whose backend does not answer before the deadline, and one cut mid-flight when the
gateway stops, may both have been paid: with an idempotency key, the first answer is the terminal
`S-TOOL-EFFECT-UNKNOWN` the key records, at the deadline on either store, and every resend replays
it (a caller is never told "retry" and then "do not"); without a key it is
`S-TOOL-EFFECT-UNKNOWN-NO-KEY`. A call that reached no backend before the stop stays retryable.
The payments go to the real fault backend, which does not deduplicate; each test runs on both stores.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2
from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.calls.envelope import CallConstraints, CallResult, CallStatus, RetryPolicy
from colonnade.calls.stages.drain import Drain
from tests.calls.conftest import Harness, build_harness
from tests.support.exactly_once import NOT_YET
from tests.support.loop_lag import loop_lag

ONCE = RetryPolicy(max_attempts=1)
SLACK_MS = 50  # past the deadline, besides the loop's own lag


def _code(result: CallResult) -> str | None:
    return result.error.code if result.error is not None else None


def _payments(fault_url: str, note: str) -> int:
    ledger: list[dict[str, Any]] = httpx2.get(f"{fault_url}/ledger").json()["ledger"]
    return sum(entry["kind"] == "payment" and entry.get("note") == note for entry in ledger)


async def _resend(harness: Harness, fault: str, note: str, key: str) -> CallResult:
    """Resend the same call as a client does: after a "not yet" answer, wait as told and send again."""
    for _ in range(100):
        constraints = CallConstraints(idempotency_key=key, timeout_ms=2_000, retry_policy=ONCE)
        result = await harness.call("create_payment", fault, input={"note": note}, constraints=constraints)
        if _code(result) not in NOT_YET:
            return result
        assert result.error is not None
        await asyncio.sleep(result.error.details.get("retry_after_ms", 100) / 1000)
    raise AssertionError(f"no definite answer to the resend of {key}")


def _drain(harness: Harness) -> Drain:
    return next(stage for stage in harness.service.pipeline.stages if isinstance(stage, Drain))


async def test_a_timed_out_keyed_payment_is_effect_unknown_at_the_deadline_and_its_resend_agrees(
    harness: Harness,
) -> None:
    slow = CallConstraints(idempotency_key="pay-slow", timeout_ms=300, retry_policy=ONCE)
    async with loop_lag() as lag:
        first = await harness.call("create_payment", "slow:1500", input={"note": "slow"}, constraints=slow)
    assert first.status is CallStatus.TERMINAL_ERROR and _code(first) == "S-TOOL-EFFECT-UNKNOWN", first
    assert first.error is not None and first.error.details["cause"] == "R-TIMEOUT-001"
    assert first.metrics.duration_ms <= 300 + SLACK_MS + lag.worst_ms
    again = await _resend(harness, "slow:1500", "slow", "pay-slow")
    assert _code(again) == "S-TOOL-EFFECT-UNKNOWN" and any(w.startswith("replay of") for w in again.warnings)
    await asyncio.sleep(1.5)  # the backend's sleep is over: whatever it was going to pay, it paid
    assert _payments(harness.fault_url, "slow") <= 1


async def test_a_payment_cut_at_shutdown_is_answered_what_its_resend_replays(
    harness: Harness, empty_engine: AsyncEngine
) -> None:
    drain = _drain(harness)
    keyed = CallConstraints(idempotency_key="pay-cut-at-stop", timeout_ms=10_000, retry_policy=ONCE)
    unkeyed = CallConstraints(timeout_ms=10_000, retry_policy=ONCE)
    calls = [
        asyncio.create_task(
            harness.call("create_payment", "slow:3000", input={"note": "stop"}, constraints=c)
        )
        for c in (keyed, unkeyed)
    ]
    for _ in range(200):  # until both are at the backend
        await asyncio.sleep(0.02)
        if drain.in_flight == 2:
            break
    await asyncio.sleep(0.3)
    assert drain.cut() == 2
    cut_keyed, cut_unkeyed = await asyncio.gather(*calls)
    later = await harness.call("create_payment", input={"note": "after"}, constraints=unkeyed)
    await harness.service.pipeline.drain()  # what the cut left to record is written before the stop

    assert cut_keyed.status is CallStatus.TERMINAL_ERROR and _code(cut_keyed) == "S-TOOL-EFFECT-UNKNOWN"
    assert cut_unkeyed.status is CallStatus.TERMINAL_ERROR, cut_unkeyed
    assert _code(cut_unkeyed) == "S-TOOL-EFFECT-UNKNOWN-NO-KEY"
    assert cut_unkeyed.error is not None and cut_unkeyed.error.details["interrupted"] is True
    assert later.status is CallStatus.RETRYABLE_ERROR and _code(later) == "R-CAP-SHUTTING-DOWN"
    assert later.error is not None and later.error.details["interrupted"] is False  # it never ran

    replica, gateway = await build_harness(empty_engine, harness.fault_url)  # the gateway that comes next
    try:
        again = await _resend(replica, "slow:3000", "stop", "pay-cut-at-stop")
    finally:
        await gateway.aclose()
    assert _code(again) == _code(cut_keyed) and any(w.startswith("replay of") for w in again.warnings)
    await asyncio.sleep(3.0)  # the backend's sleep is over
    assert _payments(harness.fault_url, "stop") <= 2  # the keyed one at most once, the unkeyed one too
