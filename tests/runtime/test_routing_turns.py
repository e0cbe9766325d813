"""Routing turns: a routed listing and the calls after it are kept in the store (across a restart),
scrubbed, and counted as selection precision and recall in the Prometheus exposition."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import mcp_types as types
import pytest
from mcp import Client
from prometheus_client import generate_latest
from typer.testing import CliRunner

from colonnade.cli import app
from colonnade.config import RoutingSettings
from colonnade.runtime.gateway import Gateway
from colonnade.store import create_store_engine
from colonnade.store.routing_turns_repo import RoutingTurnStore
from colonnade.surfaces.mcp.routing import ROUTING_META_KEY
from examples.demo_backend import create_app
from tests.support.loopback import serve_in_thread
from tests.surfaces.rest_harness import demo_contract_file, gateway_settings, serve_gateway

SECRET = "sk_live_" + "Q" * 24
"""A planted credential in what the agent asked: it must not be kept."""


@pytest.fixture(scope="module")
def backend_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    app = create_app(tmp_path_factory.mktemp("backend") / "demo.db")
    with serve_in_thread(app, lifespan="on") as url:
        yield url


def routing(**fields: Any) -> types.RequestParamsMeta:
    return cast(types.RequestParamsMeta, {ROUTING_META_KEY: fields})


def exposed(gateway: Gateway, name: str) -> float:
    for line in generate_latest(gateway.metrics.registry).decode().splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"{name} is not exposed")


async def test_a_routed_listing_and_its_calls_are_kept_scrubbed_and_counted(
    tmp_path: Path, backend_url: str
) -> None:
    contracts = [demo_contract_file(tmp_path, name, backend_url) for name in ("crm", "billing")]
    embedded = gateway_settings(tmp_path / "data", contracts)
    settings = embedded.model_copy(update={"routing": RoutingSettings(enabled=True, top_k=3)})

    gateway = await Gateway.open(settings)
    try:
        async with Client(gateway.mcp.server) as client:
            listed = await client.list_tools(
                meta=routing(query=f"list the invoices of customer C-1001, key {SECRET}", session="s-1")
            )
            shown = [tool.name for tool in listed.tools]
            assert "acme__billing__list_invoices" in shown, shown
            called = await client.call_tool(
                "acme__billing__list_invoices", {"customer_id": "C-1001"}, meta=routing(session="s-1")
            )
            assert not called.is_error, called
            hidden = next(
                t for t in ("acme__crm__get_customer", "acme__billing__get_invoice") if t not in shown
            )
            planted = await client.call_tool(  # a secret as an argument: never in the export
                "acme__billing__list_invoices", {"customer_id": SECRET}, meta=routing(session="s-1")
            )
            assert planted.is_error or planted.structured_content is not None
            await client.call_tool(
                hidden, {"customer_id": "C-1001", "invoice_id": "INV-2001"}, meta=routing(session="s-1")
            )
        routed = [name for name in shown if name.count("__") == 2]  # the meta tools come on top
        assert exposed(gateway, "colonnade_routing_shown_total") == len(routed)
        assert exposed(gateway, "colonnade_routing_shown_called_total") == 1
        assert exposed(gateway, 'colonnade_routing_calls_total{shown="true"}') == 2
        assert exposed(gateway, 'colonnade_routing_calls_total{shown="false"}') == 1
    finally:
        await gateway.aclose()  # writes the open turn

    engine = create_store_engine(settings.effective_database_url)
    try:
        (turn,) = await RoutingTurnStore(engine).recent()
    finally:
        await engine.dispose()
    assert SECRET not in turn.query and "[redacted]" in turn.query and "C-1001" in turn.query
    assert "acme:billing:list_invoices" in turn.shown
    assert (turn.calls[0].tool, turn.calls[0].outcome) == ("acme:billing:list_invoices", "success")
    assert len(turn.calls) == 3 and turn.calls[2].tool not in turn.shown
    assert "s-1" not in turn.session  # the session key is kept as a digest

    with serve_gateway(settings) as running:  # the routing page, after the restart
        page = running.client.get("/ui/routing")
    assert page.status_code == 200, page.text
    assert f'data-turn="{turn.id}"' in page.text and SECRET not in page.text
    assert 'data-shown="yes"' in page.text and 'data-shown="no"' in page.text
    assert 'id="routing-recall">67%<' in page.text

    out = tmp_path / "export" / "usage.jsonl"
    out.parent.mkdir()
    env = {"COLONNADE_DATA_DIR": str(tmp_path / "data"), "COLUMNS": "200"}
    args = ["usage", "export", "--out", str(out)]
    exported = await asyncio.to_thread(CliRunner().invoke, app, args, env=env)  # the CLI runs its own loop
    assert exported.exit_code == 0, exported.output
    assert "wrote 1 routing turns and 3 calls" in exported.output
    text = out.read_text(encoding="utf-8")
    assert SECRET not in text  # neither what was asked nor the argument
    lines = [json.loads(line) for line in text.splitlines()]
    (routed,) = [line for line in lines if line["type"] == "routing"]
    assert routed["request"] == turn.query and "acme:billing:list_invoices" in routed["tools_shown"]
    first = routed["tools_called"][0]
    assert (first["tool"], first["shown"], first["outcome"]) == (
        "acme:billing:list_invoices",
        True,
        "success",
    )
    calls = [line for line in lines if line["type"] == "call"]
    assert {call["outcome"] for call in calls} >= {"success", "invalid_request"}
    assert all(call["args_hash"] for call in calls)
    assert not (out.parent / "usage.jsonl.part").exists()

    other = await asyncio.to_thread(CliRunner().invoke, app, [*args, "--tenant", "globex"], env=env)
    assert "wrote 0 routing turns and 0 calls" in other.output, other.output
