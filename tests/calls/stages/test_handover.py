"""The caller's channel and the handover travel as values: on `Call` and the `Invocation` going in,
on the result coming out (`calls/handover.py`), never on the wire."""

from __future__ import annotations

import json

from colonnade.adapters.outcome import AdapterOutcome, OutcomeKind
from colonnade.adapters.registry import AdapterRegistry, Invocation
from colonnade.calls.call import Call
from colonnade.calls.envelope import CallRequest, CallResult, CallStatus
from colonnade.calls.handover import NOTHING_HANDED_OVER, Handover
from colonnade.calls.stages.execute import Execute
from colonnade.calls.stages.resolve import Resolve
from colonnade.catalog.catalog import Catalog
from tests.calls.stages.conftest import resolved


class Channel:
    """A caller's channel as a surface would put it on the call (what the approval gate reads)."""

    continues: str | None = None
    passes_input_rounds = False


class Backend:
    """An adapter that keeps the invocations it got and reports a protocol answer of its own."""

    def __init__(self, answer: object | None) -> None:
        self.answer = answer
        self.invocations: list[Invocation] = []

    async def execute(self, invocation: Invocation) -> AdapterOutcome:
        self.invocations.append(invocation)
        return AdapterOutcome(OutcomeKind.SUCCESS, body={"ok": True}, answer=self.answer)

    async def aclose(self) -> None:
        return None


async def test_the_channel_reaches_the_adapter_and_its_answer_comes_back_on_the_result(
    catalog: Catalog,
) -> None:
    channel = Channel()
    backend = Backend(answer={"content": [], "raw": True})
    call = resolved(catalog, "acme:crm:get_customer", input={"customer_id": "C-1"}).evolve(channel=channel)

    async def never(_: Call) -> CallResult:
        raise AssertionError("execute ends every call")

    result = await Execute(AdapterRegistry({"http": backend}))(call, never)
    assert result.status is CallStatus.SUCCESS
    assert [invocation.channel for invocation in backend.invocations] == [channel]
    assert result.handover == Handover(tool=call.tool, answer={"content": [], "raw": True})
    dumped = result.model_dump(mode="json")
    assert "handover" not in dumped and "raw" not in json.dumps(dumped)
    assert "handover" not in json.dumps(CallResult.model_json_schema())


async def test_without_a_backend_answer_the_handover_names_only_the_tool(catalog: Catalog) -> None:
    call = resolved(catalog, "acme:crm:get_customer", input={"customer_id": "C-1"})

    async def never(_: Call) -> CallResult:
        raise AssertionError("execute ends every call")

    result = await Execute(AdapterRegistry({"http": Backend(answer=None)}))(call, never)
    assert result.handover == Handover(tool=call.tool)


async def test_a_result_the_call_did_not_build_is_told_what_the_call_resolved_to(catalog: Catalog) -> None:
    stored = CallResult(call_id="c-1", status=CallStatus.SUCCESS, output={"replayed": True})

    async def replay(_: Call) -> CallResult:
        return stored  # e.g. an idempotency replay from the store

    result = await Resolve(catalog)(Call.start(CallRequest(tool_id="acme:crm:get_customer")), replay)
    assert result.handover.tool is catalog.get("acme:crm:get_customer")
    assert stored.handover is NOTHING_HANDED_OVER  # a copy was handed over: the stored one is untouched
    assert result.model_dump() == stored.model_dump()
