"""A side-effecting call without an idempotency key that fails after its backend may have acted is
answered with a terminal outcome that says the effect is unknown, never "retry": a retry could
repeat a payment that went through. Against the real fault backend (payments do not deduplicate).
"""

from __future__ import annotations

from colonnade.calls.call_errors import error
from colonnade.calls.envelope import CallConstraints, CallStatus
from colonnade.calls.stages.circuit import CIRCUIT_OPEN
from colonnade.calls.stages.idempotency import may_have_acted
from colonnade.calls.stages.unkeyed_effects import EFFECT_UNKNOWN_NO_KEY
from tests.calls.conftest import Harness
from tests.support.stage_calls import stage_call


def _payments(harness: Harness, note: str) -> int:
    return sum(1 for e in harness.ledger() if e["kind"] == "payment" and e["note"] == note)


async def test_an_unkeyed_payment_that_timed_out_is_terminal_and_says_to_use_a_key(harness: Harness) -> None:
    result = await harness.call(
        "create_payment",
        "slow:1500",
        input={"note": "timed-out"},
        constraints=CallConstraints(timeout_ms=300),
    )
    assert result.status is CallStatus.TERMINAL_ERROR, result
    assert result.error is not None and result.error.code == EFFECT_UNKNOWN_NO_KEY
    assert result.error.details["cause"] == "R-TIMEOUT-001"
    assert "idempotency_key" in result.error.fix


async def test_an_unkeyed_payment_cut_after_its_effect_is_terminal(harness: Harness) -> None:
    result = await harness.call("create_payment", "cut_after_effect", input={"note": "cut-unkeyed"})
    assert result.status is CallStatus.TERMINAL_ERROR
    assert result.error is not None and result.error.code == EFFECT_UNKNOWN_NO_KEY
    assert result.error.details["cause"] == "R-UPSTREAM-CONNECT"
    assert _payments(harness, "cut-unkeyed") == 1


async def test_a_refusal_before_the_backend_acted_stays_retryable(harness: Harness) -> None:
    result = await harness.call("create_payment", "503", input={"note": "refused"})
    assert result.status is CallStatus.RETRYABLE_ERROR
    assert result.error is not None and result.error.code == "R-UPSTREAM-UNAVAILABLE"
    assert _payments(harness, "refused") == 0


async def test_an_idempotent_write_that_timed_out_stays_retryable(harness: Harness) -> None:
    result = await harness.call(
        "put_item",
        "slow:1500",
        input={"item_id": "I-9", "value": "v"},
        constraints=CallConstraints(timeout_ms=300, retry_policy={"max_attempts": 1}),
    )
    assert result.status is CallStatus.RETRYABLE_ERROR
    assert result.error is not None and result.error.code == "R-TIMEOUT-001"


async def test_a_keyed_payment_keeps_the_idempotency_stages_answer(harness: Harness) -> None:
    result = await harness.call(
        "create_payment",
        "cut_after_effect",
        input={"note": "cut-keyed"},
        constraints=CallConstraints(idempotency_key="k-cut-keyed"),
    )
    assert result.error is not None and result.error.code == "S-TOOL-EFFECT-UNKNOWN"


def test_an_open_circuit_never_reached_the_backend() -> None:
    call = stage_call("create_payment")
    status, err = error(CIRCUIT_OPEN, backend="b", retry_after_ms=5)
    assert not may_have_acted(call.result(status, error=err))
    status, err = error("R-TIMEOUT-001")
    assert may_have_acted(call.result(status, error=err))
