"""A keyed call's outcome is recorded before it is answered, and a call in doubt never runs twice by itself.

Payments (`create_payment`) go to a backend that does not deduplicate: every request that arrives
pays again, so the ledger counts every repeat the gateway lets through. Each test runs on SQLite
and on PostgreSQL, against the real fault backend.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.calls.envelope import CallConstraints, CallResult, CallStatus, RetryPolicy
from colonnade.store import migrate_engine
from colonnade.store.idempotency_repo import IdempotencyStore
from tests.calls.conftest import Harness, build_harness
from tests.support.loop_lag import loop_lag
from tests.support.store_faults import locked_store

ONCE = RetryPolicy(max_attempts=1)
PENDING = (
    "R-CAP-KEY-IN-PROGRESS",
    "R-TIMEOUT-UNRECORDED",
    "R-TIMEOUT-STORE",
    "R-CAP-STORE-UNAVAILABLE",
    "R-CAP-STORE-UNRECORDED",
)


def _payments(harness: Harness, note: str) -> list[dict[str, Any]]:
    return [e for e in harness.ledger() if e["kind"] == "payment" and e["note"] == note]


def _code(result: CallResult) -> str | None:
    return result.error.code if result.error is not None else None


async def _held_elsewhere(
    engine: AsyncEngine, tool: str, key: str, arguments: dict[str, Any], lease_s: float
) -> None:
    """Claim `key` as another gateway would, which then stops without recording an outcome."""
    digest = hashlib.sha256(
        json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    ).hexdigest()
    store = IdempotencyStore(engine)
    try:
        claim = await store.claim(
            f"chaos|chaos:faults:{tool}|anonymous:loopback",
            key,
            digest,
            holder="gone.1",
            lease_s=lease_s,
            retention_s=3600,
        )
    finally:
        await store.aclose()
    assert claim.kind == "claimed"


async def _until_definite(harness: Harness, tool: str, fault: str, **kwargs: Any) -> CallResult:
    """Resend as a client would: after each retryable "not yet" answer, wait as told and send again."""
    give_up = time.monotonic() + 15
    while True:
        result = await harness.call(tool, fault, **kwargs)
        if _code(result) not in PENDING or time.monotonic() > give_up:
            return result
        assert result.error is not None
        await asyncio.sleep(result.error.details.get("retry_after_ms", 100) / 1000)


async def _until_arrived(harness: Harness, attempt_key: str) -> None:
    """Until the backend has received a request carrying `attempt_key` (a condition, not a guessed sleep)."""
    async with httpx2.AsyncClient(base_url=harness.fault_url, timeout=10) as client:
        for _ in range(3000):
            if (await client.get(f"/attempts/{attempt_key}")).json()["attempts"] >= 1:
                return
            await asyncio.sleep(0.01)
    raise AssertionError(f"no request with attempt key {attempt_key} reached the backend")


async def test_a_key_held_by_another_gateway_is_answered_in_progress_at_once(harness: Harness) -> None:
    arguments = {"note": "held"}
    await _held_elsewhere(harness.engine, "create_payment", "pay-held", arguments, lease_s=30)
    started = time.perf_counter()
    result = await harness.call(
        "create_payment",
        input=arguments,
        constraints=CallConstraints(idempotency_key="pay-held", timeout_ms=5_000),
    )
    elapsed = time.perf_counter() - started
    assert result.status is CallStatus.RETRYABLE_ERROR and result.error is not None
    assert result.error.code == "R-CAP-KEY-IN-PROGRESS"
    assert result.error.details["retry_after_ms"] == 1_000  # capped: the lease runs 30 s
    assert "in another gateway" in result.error.message
    assert (
        elapsed < 2.5
    )  # answered at once, not after waiting out the 5 s deadline (half of it: a busy machine)
    assert _payments(harness, "held") == []


async def test_a_payment_in_doubt_is_never_run_again(harness: Harness) -> None:
    arguments = {"note": "doubt"}
    await _held_elsewhere(harness.engine, "create_payment", "pay-doubt", arguments, lease_s=0.05)
    await asyncio.sleep(0.1)  # the holder's lease ends: it died without recording anything
    key = CallConstraints(idempotency_key="pay-doubt")
    first = await harness.call("create_payment", input=arguments, constraints=key)
    second = await harness.call("create_payment", input=arguments, constraints=key)
    for result in (first, second):
        assert result.status is CallStatus.TERMINAL_ERROR and result.error is not None
        assert result.error.code == "S-TOOL-EFFECT-UNKNOWN"
        assert "read the resource" in result.error.fix
    assert _payments(harness, "doubt") == []


@pytest.mark.parametrize(
    ("tool", "arguments", "kind", "why"),
    [
        ("create_effect", {"note": "doubt"}, "effect", "the backend deduplicates on Idempotency-Key"),
        ("put_item", {"item_id": "P-1", "value": "v"}, "put", "the tool is idempotent"),
    ],
)
async def test_a_key_in_doubt_runs_again_when_repeating_is_safe(
    harness: Harness, tool: str, arguments: dict[str, Any], kind: str, why: str
) -> None:
    await _held_elsewhere(harness.engine, tool, "safe-doubt", arguments, lease_s=0.05)
    await asyncio.sleep(0.1)
    key = CallConstraints(idempotency_key="safe-doubt")
    result = await harness.call(tool, input=arguments, constraints=key)
    replay = await harness.call(tool, input=arguments, constraints=key)
    assert result.status is CallStatus.SUCCESS, result.error
    assert any(why in warning for warning in result.warnings), result.warnings
    assert replay.output == result.output
    assert [e["kind"] for e in harness.ledger()] == [kind]


@pytest.fixture
async def unaudited(empty_engine: AsyncEngine, fault_url: str) -> AsyncIterator[Harness]:
    """The harness without the audit stage: a store held locked would fail every call closed there
    (its record cannot be written), before the idempotency stage's own answers could be seen."""
    await migrate_engine(empty_engine)
    httpx2.post(f"{fault_url}/reset")
    built, gateway = await build_harness(empty_engine, fault_url, audit_calls=False)
    yield built
    await gateway.aclose()


async def test_a_store_that_does_not_answer_before_the_claim_is_retryable_and_nothing_runs(
    unaudited: Harness,
) -> None:
    harness = unaudited
    arguments = {"note": "locked"}
    key = CallConstraints(idempotency_key="pay-locked", timeout_ms=300)
    async with loop_lag() as lag, locked_store(harness.engine):
        refused = await harness.call("create_payment", input=arguments, constraints=key)
        await asyncio.sleep(0.5)  # the lock outlives the deadline by far: a claim waited for past it shows
    assert refused.status is CallStatus.RETRYABLE_ERROR and refused.error is not None
    assert refused.error.code == "R-TIMEOUT-STORE"  # the same typed answer on SQLite and PostgreSQL
    assert refused.error.details["retry_after_ms"] > 0
    assert refused.metrics.duration_ms <= 300 + 50 + lag.worst_ms
    assert _payments(harness, "locked") == []
    final = await _until_definite(harness, "create_payment", "ok", input=arguments, constraints=key)
    assert final.status is CallStatus.SUCCESS, final.error
    assert len(_payments(harness, "locked")) == 1


async def test_an_outcome_the_store_cannot_take_is_not_answered_until_it_is_recorded(
    unaudited: Harness,
) -> None:
    harness = unaudited
    arguments = {"note": "unrecorded"}
    key = CallConstraints(idempotency_key="pay-unrecorded", timeout_ms=600)

    async def lock_while_paying() -> None:
        await asyncio.sleep(0.05)  # after the claim, while the backend pays
        async with locked_store(harness.engine):
            await asyncio.sleep(1.0)  # until past the call's deadline

    locker = asyncio.create_task(lock_while_paying())
    first = await harness.call("create_payment", "slow:150", input=arguments, constraints=key)
    meanwhile = await harness.call(
        "create_payment",
        "slow:150",
        input=arguments,
        constraints=CallConstraints(idempotency_key="pay-unrecorded", timeout_ms=150),
    )
    await locker
    final = await _until_definite(harness, "create_payment", "slow:150", input=arguments, constraints=key)
    assert first.status is CallStatus.RETRYABLE_ERROR and _code(first) == "R-TIMEOUT-UNRECORDED", first
    assert meanwhile.status is CallStatus.RETRYABLE_ERROR and _code(meanwhile) == "R-TIMEOUT-UNRECORDED"
    paid = _payments(harness, "unrecorded")
    assert len(paid) == 1  # the payment happened once; the resends were answered from its record
    assert final.status is CallStatus.SUCCESS, final.error
    assert final.output == {"payment_id": paid[0]["payment_id"], "note": "unrecorded"}
    assert any(w.startswith("replay of") for w in final.warnings)


async def test_a_payment_that_may_have_gone_through_is_not_repeated(harness: Harness) -> None:
    arguments = {"note": "cut"}
    key = CallConstraints(idempotency_key="pay-cut", retry_policy=ONCE)
    first = await harness.call("create_payment", "cut_after_effect", input=arguments, constraints=key)
    again = await harness.call("create_payment", "cut_after_effect", input=arguments, constraints=key)
    assert first.status is CallStatus.TERMINAL_ERROR and first.error is not None
    assert first.error.code == "S-TOOL-EFFECT-UNKNOWN"
    assert first.error.details["cause"] == "R-UPSTREAM-CONNECT"
    assert _code(again) == "S-TOOL-EFFECT-UNKNOWN" and any(w.startswith("replay of") for w in again.warnings)
    assert len(_payments(harness, "cut")) == 1


async def test_a_payment_refused_before_it_acted_frees_its_key(harness: Harness) -> None:
    arguments = {"note": "busy", "attempt_key": "pay-503"}
    key = CallConstraints(idempotency_key="pay-503", retry_policy=ONCE)
    refused = await harness.call("create_payment", "flaky:1:503", input=arguments, constraints=key)
    retried = await harness.call("create_payment", "flaky:1:503", input=arguments, constraints=key)
    assert refused.status is CallStatus.RETRYABLE_ERROR and _code(refused) == "R-UPSTREAM-UNAVAILABLE"
    assert retried.status is CallStatus.SUCCESS, retried.error
    assert len(_payments(harness, "busy")) == 1


async def test_an_interrupted_payment_is_not_run_again(harness: Harness) -> None:
    arguments = {"note": "interrupted", "attempt_key": "pay-interrupted"}
    key = CallConstraints(idempotency_key="pay-interrupted", timeout_ms=5_000)
    fault = "flaky:1:slow:300"  # the backend counts the request's arrival, then takes 300 ms
    running = asyncio.create_task(harness.call("create_payment", fault, input=arguments, constraints=key))
    await _until_arrived(harness, "pay-interrupted")  # the request is at the backend
    running.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await running
    await asyncio.sleep(0.4)  # the backend finishes what it was asked
    again = await _until_definite(harness, "create_payment", fault, input=arguments, constraints=key)
    assert again.status is CallStatus.TERMINAL_ERROR and _code(again) == "S-TOOL-EFFECT-UNKNOWN", again
    assert len(_payments(harness, "interrupted")) <= 1
