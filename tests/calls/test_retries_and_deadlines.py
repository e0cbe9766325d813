"""Retries happen only when safe, back off, honour Retry-After, and never outlive the deadline."""

from __future__ import annotations

import json
import time

import httpx2
import pytest

from colonnade.calls.envelope import CallConstraints, CallResult, CallStatus, RetryPolicy
from colonnade.calls.manifest import ManifestOverride, RetryLimits
from colonnade.calls.stages.retry import Retry, backoff_ms, clamp_policy, may_retry
from tests.calls.conftest import Harness, quick_retries
from tests.support.loop_lag import loop_lag
from tests.support.stage_calls import failure, stage_call


def test_backoff_is_exponential_capped_and_jittered() -> None:
    policy = RetryPolicy(max_attempts=5, base_ms=100, cap_ms=300, jitter="none")
    assert [backoff_ms(policy, n) for n in (1, 2, 3, 4)] == [100, 200, 300, 300]
    full = policy.model_copy(update={"jitter": "full"})
    assert backoff_ms(full, 2, rand=lambda: 0.5) == 100
    assert backoff_ms(full, 2, rand=lambda: 0.0) == 0


async def test_idempotent_read_recovers_from_transient_faults(harness: Harness) -> None:
    result = await harness.call(
        "get_item",
        "flaky:2:503",
        input={"item_id": "I-1", "attempt_key": "read-1"},
        constraints=CallConstraints(retry_policy=quick_retries(3)),
    )
    assert result.status is CallStatus.SUCCESS, result.error
    assert result.output == {"id": "I-1", "value": "one"}
    assert "attempts: 3" in result.warnings


async def test_retry_budget_is_respected(harness: Harness) -> None:
    result = await harness.call(
        "get_item",
        "flaky:5:503",
        input={"item_id": "I-1", "attempt_key": "read-2"},
        constraints=CallConstraints(retry_policy=quick_retries(2)),
    )
    assert result.status is CallStatus.RETRYABLE_ERROR
    assert result.error is not None and result.error.code == "R-UPSTREAM-UNAVAILABLE"
    assert result.error.details["attempts"] == 2


async def test_side_effectful_call_without_key_is_never_retried(harness: Harness) -> None:
    result = await harness.call(
        "create_effect",
        "flaky:1:503",
        input={"note": "once", "attempt_key": "eff-1"},
        constraints=CallConstraints(retry_policy=quick_retries(3)),
    )
    assert result.status is CallStatus.RETRYABLE_ERROR
    assert "attempts" not in (result.error.details if result.error else {})
    assert harness.ledger() == []


async def test_side_effectful_call_with_key_is_retried_and_runs_once(harness: Harness) -> None:
    result = await harness.call(
        "create_effect",
        "flaky:1:cut_after_effect",
        input={"note": "ambiguous", "attempt_key": "eff-2"},
        constraints=CallConstraints(idempotency_key="k-eff-2", retry_policy=quick_retries(3)),
    )
    assert result.status is CallStatus.SUCCESS, result.error
    effects = [e for e in harness.ledger() if e["kind"] == "effect"]
    assert len(effects) == 1 and str(effects[0]["key"]).startswith("cln-")


async def test_a_keyed_payment_cut_after_its_effect_is_not_retried_and_pays_once(harness: Harness) -> None:
    """The backend does not deduplicate: a retry inside the pipeline would pay a second time."""
    result = await harness.call(
        "create_payment",
        "flaky:1:cut_after_effect",
        input={"note": "retry-once", "attempt_key": "pay-retry"},
        constraints=CallConstraints(idempotency_key="k-pay-retry", retry_policy=quick_retries(3)),
    )
    payments = [e for e in harness.ledger() if e["kind"] == "payment" and e["note"] == "retry-once"]
    assert len(payments) == 1
    assert result.status is CallStatus.TERMINAL_ERROR and result.error is not None
    assert result.error.code == "S-TOOL-EFFECT-UNKNOWN"
    assert "attempts" not in result.error.details


def test_only_calls_that_cannot_add_a_second_effect_may_be_retried() -> None:
    assert may_retry(stage_call("get_item"))  # pure read
    assert may_retry(stage_call("put_item"))  # PUT: idempotent
    assert not may_retry(stage_call("create_payment"))
    assert not may_retry(stage_call("create_payment", idempotency_key="k-1"))  # no deduplication
    assert may_retry(stage_call("create_effect", idempotency_key="k-1"))  # the backend deduplicates
    assert not may_retry(stage_call("create_effect"))  # ... but only with a key to deduplicate on


async def test_retry_after_is_honoured(harness: Harness) -> None:
    started = time.perf_counter()
    result = await harness.call(
        "get_item",
        "flaky:1:429:1000",
        input={"item_id": "I-2", "attempt_key": "ra-1"},
        constraints=CallConstraints(retry_policy=quick_retries(2), timeout_ms=5_000),
    )
    elapsed = time.perf_counter() - started
    assert result.status is CallStatus.SUCCESS
    assert elapsed >= 1.0  # Retry-After: 1 s, although the backoff alone is at most 20 ms


async def test_no_retry_that_would_start_past_the_deadline(harness: Harness) -> None:
    result = await harness.call(
        "get_item",
        "flaky:3:429:2000",
        input={"item_id": "I-2", "attempt_key": "ra-2"},
        constraints=CallConstraints(retry_policy=quick_retries(3), timeout_ms=500),
    )
    assert result.status is CallStatus.RETRYABLE_ERROR
    assert any("past the deadline" in w for w in result.warnings)
    assert result.metrics.duration_ms < 1_500  # the 2 s Retry-After was not waited out


@pytest.mark.parametrize("timeout_ms", [150, 400])
async def test_slow_backend_is_cut_at_the_deadline(harness: Harness, timeout_ms: int) -> None:
    async with loop_lag() as lag:
        result = await harness.call(
            "get_item",
            "slow:3000",
            input={"item_id": "I-1"},
            constraints=CallConstraints(timeout_ms=timeout_ms),
        )
    assert result.status is CallStatus.RETRYABLE_ERROR
    assert result.error is not None and result.error.code == "R-TIMEOUT-001"
    # 50 ms past the deadline, plus what the loop itself ran late on a busy machine (a few ms idle)
    assert result.metrics.duration_ms <= timeout_ms + 50 + lag.worst_ms


async def test_deadline_unix_ms_bounds_the_call(harness: Harness) -> None:
    deadline = int(time.time() * 1000) + 200
    result = await harness.call(
        "get_item",
        "slow:3000",
        input={"item_id": "I-1"},
        constraints=CallConstraints(deadline_unix_ms=deadline),
    )
    assert result.error is not None and result.error.code == "R-TIMEOUT-001"
    # Answered near the deadline, far from the backend's 3 s: the audit record (PostgreSQL too) is
    # written after the timeout, and a loaded 2-core machine was seen to take 55 ms for it.
    assert time.time() * 1000 <= deadline + 500


@pytest.mark.parametrize("ago_ms", [None, 1_000, 3_600_000])
async def test_a_deadline_already_past_is_refused_before_dispatch(
    harness: Harness, ago_ms: int | None
) -> None:
    """0 (the epoch) or a time already gone: nothing is sent, and the answer says a resend cannot help."""
    deadline = 0 if ago_ms is None else int(time.time() * 1000) - ago_ms
    result = await harness.call(
        "create_payment",
        input={"note": f"late-{ago_ms}"},
        constraints=CallConstraints(deadline_unix_ms=deadline),
    )
    assert result.status is CallStatus.INVALID_REQUEST
    assert result.error is not None and result.error.code == "I-REQ-DEADLINE-PASSED"
    assert "cannot help" in result.error.fix and "deadline_unix_ms" in result.error.fix
    assert result.error.details["deadline_unix_ms"] == deadline
    assert harness.fault_url.removeprefix("http://") not in result.error.message
    assert "127.0.0.1" not in json.dumps(result.error.model_dump())
    assert [e for e in harness.ledger() if e["kind"] == "payment"] == []


def test_a_callers_policy_is_clamped_to_the_manifest() -> None:
    hammer = RetryPolicy(max_attempts=10, base_ms=1, cap_ms=1, jitter="full")
    clamped, note = clamp_policy(hammer, RetryLimits(max_attempts=3, min_backoff_ms=20))
    assert (clamped.max_attempts, clamped.base_ms, clamped.cap_ms) == (3, 20, 20)
    assert note == "retry_policy clamped to the tool's manifest: max_attempts 10 -> 3, base_ms 1 -> 20"
    modest = RetryPolicy(max_attempts=2, base_ms=200, cap_ms=400)
    assert clamp_policy(modest, RetryLimits(max_attempts=5, min_backoff_ms=20)) == (modest, None)


async def test_no_wait_between_attempts_is_shorter_than_the_manifests_minimum() -> None:
    waits: list[float] = []

    async def record(seconds: float) -> None:
        waits.append(seconds)

    retry = Retry(rand=lambda: 0.0, sleep=record)  # full jitter drawing 0: no wait at all unclamped
    manifest = ManifestOverride(retry=RetryLimits(max_attempts=4, min_backoff_ms=250))
    call = stage_call(override=manifest, retry_policy=RetryPolicy(max_attempts=9, base_ms=1))
    result: CallResult = await retry(call, failure("R-UPSTREAM-UNAVAILABLE"))
    assert waits == [0.25, 0.25, 0.25]
    assert result.error is not None and result.error.details["attempts"] == 4


async def test_a_caller_cannot_make_the_gateway_hammer_a_failing_backend(harness: Harness) -> None:
    hammer = RetryPolicy(max_attempts=10, base_ms=1, cap_ms=1, jitter="full")
    result = await harness.call(
        "get_item",
        "flaky:100:503",
        input={"item_id": "I-1", "attempt_key": "hammer-1"},
        constraints=CallConstraints(retry_policy=hammer, timeout_ms=5_000),
    )
    assert result.error is not None and result.error.code == "R-UPSTREAM-UNAVAILABLE"
    assert result.error.details["attempts"] == 3  # the manifest's default, not the caller's 10
    assert httpx2.get(f"{harness.fault_url}/attempts/hammer-1").json() == {"attempts": 3}
    assert any("clamped to the tool's manifest" in w for w in result.warnings)
