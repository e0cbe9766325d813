"""The client's own rules, without a gateway: keys, backoff, and the output check.

The output check is the one place a stand-in transport is used: the gateway validates outputs
itself, so no real gateway answers a success that breaks its tool's schema.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from colonnade.calls.envelope import CallRequest, CallResult, CallStatus
from colonnade.client import AsyncColonnade, Backoff, CallOptions, OutputSchemaMismatch, idempotency_key


def test_the_same_call_gets_the_same_key_whatever_the_order_of_its_input() -> None:
    one = idempotency_key("acme:items:write_item", {"item_id": "I-1", "value": "x"})
    same = idempotency_key("acme:items:write_item", {"value": "x", "item_id": "I-1"})
    assert one == same and one.startswith("ik_") and len(one) == 3 + 64


@pytest.mark.parametrize(
    "other",
    [
        {"tool_id": "acme:items:read_item"},
        {"input": {"item_id": "I-2", "value": "x"}},
        {"fn": "other"},
        {"version": "2.x"},
    ],
)
def test_any_difference_in_the_call_gives_another_key(other: dict[str, Any]) -> None:
    base: dict[str, Any] = {"tool_id": "acme:items:write_item", "input": {"item_id": "I-1", "value": "x"}}
    changed = {**base, **other}
    assert idempotency_key(base["tool_id"], base["input"]) != idempotency_key(
        changed["tool_id"], changed["input"], fn=changed.get("fn"), version=changed.get("version")
    )


def test_backoff_never_waits_less_than_the_gateway_asks_and_stays_under_its_bounds() -> None:
    backoff = Backoff(base_s=0.1, cap_s=1.0, rng=random.Random(7))
    for attempt in range(1, 10):
        assert 0 <= backoff.delay(attempt) <= 1.0
        assert backoff.delay(attempt, retry_after_ms=2500) >= 2.5


def test_backoff_stops_at_its_attempts_and_its_budget() -> None:
    backoff = Backoff(max_attempts=3, budget_s=1.0)
    assert backoff.allows(1, 0.0, 0.2) and backoff.allows(2, 0.5, 0.2)
    assert not backoff.allows(3, 0.0, 0.0), "three attempts made"
    assert not backoff.allows(1, 0.9, 0.2), "the wait would end past the budget"


class _Answers:
    """A transport whose answers are given: only for outputs no real gateway sends (see above)."""

    def __init__(self, output: Any, schema: dict[str, Any]) -> None:
        self.output, self.schema = output, schema

    async def call(self, request: CallRequest) -> CallResult:
        return CallResult(call_id=request.call_id, status=CallStatus.SUCCESS, output=self.output)

    async def tool(self, name: str) -> dict[str, Any]:
        return {"input_schema": {}, "output_schema": self.schema}

    async def aclose(self) -> None:
        return None


async def test_a_success_that_breaks_the_output_schema_is_not_handed_to_the_agent() -> None:
    schema = {"type": "object", "properties": {"total": {"type": "number"}}, "required": ["total"]}
    agent = AsyncColonnade(_Answers({"total": "lots"}, schema))  # type: ignore[arg-type]
    with pytest.raises(OutputSchemaMismatch, match="total") as raised:
        await agent.call("acme:billing:total", {})
    assert raised.value.output == {"total": "lots"}
    fine = AsyncColonnade(_Answers({"total": 3}, schema))  # type: ignore[arg-type]
    assert (await fine.call("acme:billing:total", {})).ok
    unchecked = await agent.call("acme:billing:total", {}, CallOptions(validate_output=False))
    assert unchecked.output == {"total": "lots"}
