"""Typed trace events: made by the pipeline and the router, kept, filtered, served, and written out.

The gateway is built in process on the demo CRM catalog; calls go through the real pipeline (a
search runs the router; a call of the CRM tool ends in a typed error, no backend runs here).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import httpx2
import pytest
from jsonschema import Draft202012Validator
from mcp import Client

from colonnade.catalog.catalog import Catalog
from colonnade.config import RoutingSettings, Settings, TelemetrySettings
from colonnade.governance.operators import may_read_trace_events
from colonnade.governance.personas import Scope
from colonnade.governance.principal import Principal, PrincipalKind
from colonnade.observability.trace_event_log import TraceEventLog, build_event_log
from colonnade.observability.trace_events import (
    EVENT_KINDS,
    SCHEMA_FILE,
    CallEnded,
    CallStarted,
    ToolsListed,
    trace_event_schema,
)
from colonnade.runtime.gateway import Gateway
from tests.observability.conftest import TOOL
from tests.support.otlp_receiver import attributes_of, otlp_receiver, until

SCHEMA_DIR = Path(__file__).resolve().parents[2] / "src" / "colonnade" / "schemas"
WIRE_TOOL = TOOL.replace(":", "__")


def _settings(tmp_path: Path, **telemetry: object) -> Settings:
    return Settings(
        data_dir=tmp_path,
        routing=RoutingSettings(enabled=True),
        telemetry=TelemetrySettings.model_validate(telemetry),
    )


@pytest.fixture
async def gateway(catalog: Catalog, tmp_path: Path) -> AsyncIterator[Gateway]:
    built = Gateway(_settings(tmp_path, events_jsonl=str(tmp_path / "events.jsonl")), catalog=catalog)
    yield built
    await built.aclose()


async def _two_calls(gateway: Gateway) -> None:
    async with Client(gateway.mcp.server) as client:
        found = await client.call_tool("search_tools", {"query": "fetch one customer record"})
        fetched = await client.call_tool(WIRE_TOOL, {"customer_id": "C-1001"})
    assert found.is_error is False and fetched.is_error is True


async def test_each_call_has_a_started_and_an_ended_event_joined_by_its_ids(gateway: Gateway) -> None:
    await _two_calls(gateway)
    assert gateway.events is not None
    ended = gateway.events.recent(kind="call.ended")
    assert [event.tool for event in ended if isinstance(event, CallEnded)] == [
        TOOL,
        "colonnade:gateway:search_tools",
    ]
    for end in ended:
        assert isinstance(end, CallEnded)
        (start,) = gateway.events.recent(kind="call.started", trace_id=end.trace_id)
        assert isinstance(start, CallStarted)
        assert start.request_id == end.request_id and start.time_unix_nano <= end.time_unix_nano
        assert end.duration_ms >= 0
    failed = next(event for event in ended if isinstance(event, CallEnded) and event.tool == TOOL)
    assert failed.status != "success" and failed.code  # the typed error's code, not a guess
    search = next(event for event in ended if isinstance(event, CallEnded) and event.tool != TOOL)
    assert (search.status, search.code) == ("success", None)


async def test_a_search_records_the_routers_decision(gateway: Gateway) -> None:
    await _two_calls(gateway)
    assert gateway.events is not None
    (listed,) = gateway.events.recent(kind="tools.listed")
    assert isinstance(listed, ToolsListed)
    assert "customer" in listed.query and TOOL in listed.selected
    assert 0 <= listed.confidence <= 1


async def test_events_carry_no_argument_values(gateway: Gateway, tmp_path: Path) -> None:
    await _two_calls(gateway)
    await gateway.aclose()  # the JSONL sink writes what is queued before it closes
    text = (tmp_path / "events.jsonl").read_text(encoding="utf-8")
    assert "C-1001" not in text
    assert len(text.splitlines()) == 5  # 2 x (started, ended) + 1 tools.listed


async def test_the_jsonl_file_holds_every_event_valid_against_the_published_schema(
    gateway: Gateway, tmp_path: Path
) -> None:
    await _two_calls(gateway)
    await gateway.aclose()
    validator = Draft202012Validator(json.loads((SCHEMA_DIR / SCHEMA_FILE).read_text(encoding="utf-8")))
    lines = [
        json.loads(line) for line in (tmp_path / "events.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert {line["kind"] for line in lines} == {"call.started", "call.ended", "tools.listed"}
    for line in lines:
        problems = [error.message for error in validator.iter_errors(line)]
        assert not problems, (line, problems)
    with pytest.raises(Exception, match=r"kind|discriminator|not valid"):
        validator.validate({**lines[0], "kind": "call.exploded"})


def test_the_checked_in_schema_is_the_models_schema() -> None:
    checked_in = json.loads((SCHEMA_DIR / SCHEMA_FILE).read_text(encoding="utf-8"))
    assert checked_in == trace_event_schema(), "run `make schemas` and commit the result"
    assert set(checked_in["discriminator"]["mapping"]) == set(EVENT_KINDS)


def test_only_the_last_events_are_kept() -> None:
    log = TraceEventLog(keep=3)
    for number in range(5):
        log.emit(CallStarted(tool_id=f"t{number}", request_id=str(number)))
    assert [event.request_id for event in log.recent()] == ["4", "3", "2"]
    assert log.status()["emitted_by_kind"] == {"call.started": 5}
    assert [event.request_id for event in log.recent(limit=1)] == ["4"]


def test_no_events_kept_and_no_sink_means_no_event_log() -> None:
    assert build_event_log(TelemetrySettings(events_keep=0)) is None
    assert build_event_log(TelemetrySettings()) is not None


async def test_rest_serves_recent_events_filtered_and_refuses_bad_queries(gateway: Gateway) -> None:
    await _two_calls(gateway)
    transport = httpx2.ASGITransport(app=gateway.http_app())
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8765") as client:
        answer = await client.get("/v1/trace-events", params={"kind": "call.ended", "limit": 1})
        bad_kind = await client.get("/v1/trace-events", params={"kind": "call.exploded"})
        bad_limit = await client.get("/v1/trace-events", params={"limit": "0"})
        status = await client.get("/v1/status")
    assert answer.status_code == 200
    (event,) = answer.json()["events"]
    assert (event["kind"], event["tool"]) == ("call.ended", TOOL)
    assert bad_kind.status_code == 400 and bad_kind.json()["error"]["details"]["parameter"] == "kind"
    assert bad_limit.status_code == 400 and bad_limit.json()["error"]["details"]["parameter"] == "limit"
    assert status.json()["trace_events"]["emitted_by_kind"]["call.ended"] == 2


def test_only_an_operator_reads_trace_events() -> None:
    operator = Principal(PrincipalKind.USER, "ops", scopes=frozenset({Scope.LOGS_TECHNICAL}))
    tenant_admin = Principal(PrincipalKind.USER, "t", tenant="acme", scopes=frozenset({Scope.LOGS_TECHNICAL}))
    developer = Principal(PrincipalKind.USER, "dev", scopes=frozenset({Scope.CATALOG_READ}))
    anonymous = Principal(PrincipalKind.ANONYMOUS, "loopback")
    assert [may_read_trace_events(p) for p in (operator, tenant_admin, developer, anonymous)] == [
        True,
        False,
        False,
        True,
    ]


async def test_events_go_out_as_otlp_log_records(catalog: Catalog, tmp_path: Path) -> None:
    with otlp_receiver() as receiver:
        gateway = Gateway(
            _settings(tmp_path, otlp_endpoint=receiver.url, traces=False, metrics=False), catalog=catalog
        )
        try:
            await _two_calls(gateway)
        finally:
            await gateway.aclose()  # the sink sends what is queued before it closes
        assert await until(lambda: len(receiver.log_records()) >= 5)
        records = receiver.log_records()
    assert sorted(record.event_name for record in records) == sorted(
        ["call.started", "call.started", "call.ended", "call.ended", "tools.listed"]
    )
    ended = [record for record in records if record.event_name == "call.ended"]
    tools = {attributes_of(record)["colonnade.tool"] for record in ended}
    assert tools == {TOOL, "colonnade:gateway:search_tools"}
    assert all(len(record.trace_id) == 16 for record in ended)  # the call's W3C trace id, as bytes
    assert not any(b"C-1001" in body for body in receiver.raw)


async def test_a_collector_that_is_down_costs_calls_nothing_and_is_counted(
    catalog: Catalog, tmp_path: Path
) -> None:
    from tests.support.loopback import free_port

    down = f"http://127.0.0.1:{free_port()}"
    gateway = Gateway(_settings(tmp_path, otlp_endpoint=down, traces=False, metrics=False), catalog=catalog)
    try:
        await _two_calls(gateway)
    finally:
        await gateway.aclose()
    assert gateway.events is not None
    (otlp,) = gateway.events.status()["sinks"]
    assert otlp["sink"] == "otlp" and otlp["failed"] == 5 and otlp["written"] == 0


async def test_the_events_page_shows_the_calls_and_filters_by_kind_and_trace(gateway: Gateway) -> None:
    await _two_calls(gateway)
    assert gateway.events is not None
    (ended,) = [event for event in gateway.events.recent(kind="call.ended") if isinstance(event, CallEnded)][
        :1
    ]
    transport = httpx2.ASGITransport(app=gateway.http_app())
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8765") as client:
        every = await client.get("/ui/events")
        only_ends = await client.get("/ui/events", params={"kind": "call.ended"})
        one_trace = await client.get("/ui/events", params={"trace_id": ended.trace_id})
        bad = await client.get("/ui/events", params={"kind": "call.exploded"})
    assert every.status_code == 200
    assert every.text.count("<tr>") == 1 + 5  # the header and five events
    assert TOOL in every.text and "tools.listed" in every.text and "C-1001" not in every.text
    assert only_ends.text.count("<tr>") == 1 + 2 and "call.started</td>" not in only_ends.text
    assert one_trace.text.count("<tr>") == 1 + 2  # that call's start and end
    assert bad.status_code == 400 and "Unknown event kind" in bad.text
