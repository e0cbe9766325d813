"""The gateway learns tool co-occurrence from real calls and keeps it in its database across restarts."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import mcp_types as types
import pytest
from mcp import Client
from sqlalchemy import text

from colonnade.config import RoutingSettings
from colonnade.runtime.gateway import Gateway
from colonnade.store import create_store_engine
from colonnade.surfaces.mcp.routing import ROUTING_META_KEY
from examples.demo_backend import create_app
from tests.support.loopback import serve_in_thread
from tests.surfaces.rest_harness import demo_contract_file, gateway_settings

GET, INVOICES = "acme:crm:get_customer", "acme:billing:list_invoices"


@pytest.fixture(scope="module")
def backend_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    app = create_app(tmp_path_factory.mktemp("backend") / "demo.db")
    with serve_in_thread(app, lifespan="on") as url:
        yield url


def in_session(session: str) -> types.RequestParamsMeta:
    return cast(types.RequestParamsMeta, {ROUTING_META_KEY: {"session": session}})


async def test_learned_co_occurrence_survives_a_gateway_restart(tmp_path: Path, backend_url: str) -> None:
    contracts = [demo_contract_file(tmp_path, name, backend_url) for name in ("crm", "billing")]
    data_dir = tmp_path / "data"
    stale = data_dir / "routing" / "co_occurrence.json"  # what earlier versions saved: ignored now
    stale.parent.mkdir(parents=True)
    stale.write_text("{not json")
    embedded = gateway_settings(data_dir, contracts)
    settings = embedded.model_copy(update={"routing": RoutingSettings(enabled=True, top_k=3)})
    arguments: dict[str, Any] = {"customer_id": "C-1001"}

    gateway = await Gateway.open(settings)
    try:
        assert len(gateway.feedback.learned) == 0
        async with Client(gateway.mcp.server) as client:
            for tool in ("acme__crm__get_customer", "acme__billing__list_invoices"):
                result = await client.call_tool(tool, arguments, meta=in_session("agent-1"))
                assert not result.is_error, result
    finally:
        await gateway.aclose()  # below save_every: saved at shutdown

    engine = create_store_engine(settings.effective_database_url)
    try:
        async with engine.connect() as conn:
            rows = (await conn.execute(text("SELECT tool, uses FROM tool_uses ORDER BY tool"))).all()
    finally:
        await engine.dispose()
    assert [tuple(row) for row in rows] == [(INVOICES, 1), (GET, 1)]

    restarted = await Gateway.open(settings)
    try:
        learned = restarted.feedback.learned
        assert learned.affinity(GET, INVOICES) == learned.affinity(INVOICES, GET) == 0.5
        decision = restarted.router.route("look up a customer", session_tools=[GET])
        assert f"often used with {GET}" in " ".join(decision.reasons.get(INVOICES, []))
    finally:
        await restarted.aclose()
