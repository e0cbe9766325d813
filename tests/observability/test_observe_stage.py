"""The observe stage: one log line per call with its fields, refusals observed, the last-resort guard."""

from __future__ import annotations

import asyncio
import logging

import pytest

from colonnade.calls.envelope import CallStatus
from colonnade.calls.stages.observe import CANCELLED
from colonnade.catalog.catalog import Catalog
from colonnade.observability.metrics import UNRESOLVED_TOOL
from tests.observability.conftest import (
    TOOL,
    Answer,
    Explode,
    Gate,
    LogCapture,
    observed,
    request,
    sample,
)


async def test_one_line_per_call_with_the_fields_of_the_call(logs: LogCapture, catalog: Catalog) -> None:
    gateway = observed(catalog, Answer())
    sent = request(fn="lookup")
    result = await gateway.service.call(sent)
    assert result.status is CallStatus.SUCCESS
    (line,) = logs.events("call")
    assert line["logger"] == "colonnade.calls"
    assert line["level"] == "info"
    assert line["tool"] == TOOL
    assert line["fn"] == "lookup"
    assert line["call_id"] == sent.call_id
    assert line["trace_id"] == sent.context.trace_id
    assert line["status"] == "success"
    assert line["code"] is None
    assert line["version"] == catalog.get(TOOL).version  # type: ignore[union-attr]
    assert line["args"] == ["customer_id"]
    assert isinstance(line["duration_ms"], float) and line["duration_ms"] >= 0
    assert len(line["input_hash"]) == 16 and "timestamp" in line


async def test_every_call_gets_its_own_line(logs: LogCapture, catalog: Catalog) -> None:
    gateway = observed(catalog, Answer())
    sent = [request() for _ in range(5)]
    for call in sent:
        await gateway.service.call(call)
    assert [line["call_id"] for line in logs.events("call")] == [call.call_id for call in sent]


async def test_an_error_outcome_logs_its_code_at_warning(logs: LogCapture, catalog: Catalog) -> None:
    gateway = observed(catalog, Answer())
    result = await gateway.service.call(request(input={"fail_with": "R-UPSTREAM-UNAVAILABLE"}))
    assert result.status is CallStatus.RETRYABLE_ERROR
    (line,) = logs.events("call")
    assert (line["status"], line["code"], line["level"]) == (
        "retryable_error",
        "R-UPSTREAM-UNAVAILABLE",
        "warning",
    )


async def test_lines_logged_inside_the_call_carry_its_ids(logs: LogCapture, catalog: Catalog) -> None:
    gateway = observed(catalog, Answer())
    sent = request()
    await gateway.service.call(sent)
    (inner,) = logs.events("answering")
    assert inner["logger"] == "colonnade.test"
    assert (inner["call_id"], inner["trace_id"]) == (sent.call_id, sent.context.trace_id)
    logging.getLogger("colonnade.test").info("after")
    (after,) = logs.events("after")
    assert "call_id" not in after and "trace_id" not in after


async def test_an_unknown_tool_is_logged_and_counted(logs: LogCapture, catalog: Catalog) -> None:
    gateway = observed(catalog, Answer())
    sent = request("acme:crm:no_such_operation")
    result = await gateway.service.call(sent)
    assert result.error is not None and result.error.code == "I-REQ-UNKNOWN-TOOL"
    (line,) = logs.events("call")
    assert line["tool"] is None
    assert line["tool_id"] == "acme:crm:no_such_operation"
    assert (line["status"], line["code"], line["call_id"]) == (
        "invalid_request",
        "I-REQ-UNKNOWN-TOOL",
        sent.call_id,
    )
    labels = {"tool": UNRESOLVED_TOOL, "status": "invalid_request", "code": "I-REQ-UNKNOWN-TOOL"}
    assert sample(gateway.metrics, "colonnade_calls_total", **labels) == 1


async def test_unknown_tool_names_never_become_metric_labels(logs: LogCapture, catalog: Catalog) -> None:
    gateway = observed(catalog, Answer())
    for i in range(20):
        await gateway.service.call(request(f"made_up_{i}"))
    tools = {
        s.labels["tool"]
        for family in gateway.metrics.registry.collect()
        for s in family.samples
        if "tool" in s.labels
    }
    assert tools == {UNRESOLVED_TOOL}


async def test_a_long_caller_chosen_id_is_clipped(logs: LogCapture, catalog: Catalog) -> None:
    gateway = observed(catalog, Answer())
    await gateway.service.call(request(call_id="c" * 5000))
    (line,) = logs.events("call")
    assert line["call_id"].startswith("c" * 128) and len(line["call_id"]) < 140


async def test_an_exception_in_a_later_stage_becomes_s_tool_internal(
    logs: LogCapture, catalog: Catalog
) -> None:
    gateway = observed(catalog, Explode())
    sent = request()
    result = await gateway.service.call(sent)
    assert result.status is CallStatus.TERMINAL_ERROR
    assert result.error is not None and result.error.code == "S-TOOL-INTERNAL"
    assert result.error.details == {"trace_id": sent.context.trace_id}
    assert "C-1001" not in result.model_dump_json()
    (line,) = logs.events("call")
    assert (line["level"], line["status"], line["code"]) == ("error", "terminal_error", "S-TOOL-INTERNAL")
    assert line["fault"]["type"] == "builtins.KeyError"
    assert any("in __call__" in frame for frame in line["fault"]["frames"])
    assert "C-1001" not in logs.text  # the exception's message quoted the argument value
    assert sample(gateway.metrics, "colonnade_calls_in_flight", tool=TOOL) == 0


async def test_in_flight_counts_calls_inside_the_pipeline(logs: LogCapture, catalog: Catalog) -> None:
    gate = Gate()
    gateway = observed(catalog, gate, Answer())
    running = asyncio.create_task(gateway.service.call(request()))
    await gate.entered.wait()
    assert sample(gateway.metrics, "colonnade_calls_in_flight", tool=TOOL) == 1
    assert logs.events("call") == []
    gate.release.set()
    assert (await running).status is CallStatus.SUCCESS
    assert sample(gateway.metrics, "colonnade_calls_in_flight", tool=TOOL) == 0


async def test_a_cancelled_call_is_recorded_and_the_cancellation_propagates(
    logs: LogCapture, catalog: Catalog
) -> None:
    gate = Gate()
    gateway = observed(catalog, gate, Answer())
    running = asyncio.create_task(gateway.service.call(request()))
    await gate.entered.wait()
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert sample(gateway.metrics, "colonnade_calls_in_flight", tool=TOOL) == 0
    (line,) = logs.events("call")
    assert (line["status"], line["level"]) == (CANCELLED, "warning")
    assert sample(gateway.metrics, "colonnade_calls_total", tool=TOOL, status=CANCELLED, code="") == 1


async def test_calls_below_the_log_level_write_no_line_but_are_counted(
    logs: LogCapture, catalog: Catalog
) -> None:
    from colonnade.observability.logging import configure_logging

    configure_logging("warning", stream=logs.stream, renderer="json")
    gateway = observed(catalog, Answer())
    await gateway.service.call(request())
    await gateway.service.call(request(input={"fail_with": "R-UPSTREAM-CONNECT"}))
    assert [line["status"] for line in logs.events("call")] == ["retryable_error"]
    assert sample(gateway.metrics, "colonnade_calls_total", tool=TOOL, status="success", code="") == 1
