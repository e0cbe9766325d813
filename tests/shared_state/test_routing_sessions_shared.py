"""A routing session continued on another replica keeps its context and its recent tools; what one
replica learns about tools used together reaches the others' routing as soon as it is saved."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any, cast

import mcp_types as types
import pytest
from mcp import Client

from colonnade.config import RoutingSettings, Settings, SharedStateSettings
from colonnade.runtime.gateway import Gateway
from colonnade.smoke.connect import connect
from colonnade.surfaces.mcp.routing import ROUTING_META_KEY
from examples.demo_backend import create_app
from tests.shared_state.replicas import admin_key, replica_settings, replicas, within
from tests.support.loopback import serve_in_thread
from tests.support.machine_load import patient
from tests.support.redis_server import REDIS_UP_OP_TIMEOUT_S
from tests.surfaces.rest_harness import demo_contract_file, gateway_settings

GET, INVOICES = "acme:crm:get_customer", "acme:billing:list_invoices"


@pytest.fixture(scope="module")
def backend_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    app = create_app(tmp_path_factory.mktemp("backend") / "demo.db")
    with serve_in_thread(app, lifespan="on") as url:
        yield url


def _meta(**routing: Any) -> types.RequestParamsMeta:
    return cast(types.RequestParamsMeta, {ROUTING_META_KEY: routing})


@contextlib.asynccontextmanager
async def _replica(settings: Settings, name: str) -> AsyncIterator[Gateway]:
    shared = settings.shared_state.model_copy(update={"replica_id": name})
    gateway = await Gateway.open(
        settings.model_copy(update={"data_dir": settings.data_dir / name, "shared_state": shared})
    )
    try:
        async with gateway.shared.running():
            await asyncio.wait_for(gateway.shared.fanout.listening(), patient(5))
            yield gateway
    finally:
        await gateway.aclose()


def _settings(tmp_path: Path, backend_url: str, database: str, redis_url: str, prefix: str) -> Settings:
    contracts = [demo_contract_file(tmp_path, name, backend_url) for name in ("crm", "billing")]
    return gateway_settings(tmp_path / "data", contracts).model_copy(
        update={
            "database_url": database,
            "routing": RoutingSettings(enabled=True, top_k=3, learned_reload_s=3600),
            "shared_state": SharedStateSettings(
                redis_url=redis_url, key_prefix=prefix, op_timeout_s=REDIS_UP_OP_TIMEOUT_S
            ),
        }
    )


async def test_a_routing_session_continued_on_another_replica_keeps_its_context_and_tools(
    tmp_path: Path, backend_url: str, replica_database: str, redis_url: str, redis_prefix: str
) -> None:
    settings = _settings(tmp_path, backend_url, replica_database, redis_url, redis_prefix)
    arguments = {"customer_id": "C-1001"}
    async with (
        _replica(settings, "a") as a,
        _replica(settings, "b") as b,
        Client(a.mcp.server) as on_a,
        Client(b.mcp.server) as on_b,
    ):
        plain = await on_b.list_tools(meta=_meta(session="other"))
        routed_a = await on_a.list_tools(meta=_meta(session="s1", query="look up a customer"))
        routed_b = await on_b.list_tools(meta=_meta(session="s1"))  # no query: B must know it
        shown_a = [tool.name for tool in routed_a.tools]
        assert [tool.name for tool in routed_b.tools] == shown_a
        assert len(routed_b.tools) < len(plain.tools), "B served the whole catalog: no context"

        called = await on_a.call_tool("acme__crm__get_customer", arguments, meta=_meta(session="s1"))
        assert not called.is_error
        assert b.feedback.learned.affinity(INVOICES, GET) == 0
        called = await on_b.call_tool("acme__billing__list_invoices", arguments, meta=_meta(session="s1"))
        assert not called.is_error
        # B paired its call with the one made on A: the session's recent tools came along.
        assert b.feedback.learned.affinity(INVOICES, GET) > 0
        caller = a.local_principal.key  # in-process clients call as the local principal
        assert b.feedback.session_tools(f"session:{caller}:s1") == (GET, INVOICES)


async def test_co_occurrence_saved_by_one_replica_reaches_the_others_at_once(
    tmp_path: Path, backend_url: str, replica_database: str, redis_url: str, redis_prefix: str
) -> None:
    settings = _settings(tmp_path, backend_url, replica_database, redis_url, redis_prefix)
    arguments = {"customer_id": "C-1001"}
    async with _replica(settings, "a") as a, _replica(settings, "b") as b:
        async with Client(a.mcp.server) as on_a:
            for tool in ("acme__crm__get_customer", "acme__billing__list_invoices"):
                result = await on_a.call_tool(tool, arguments, meta=_meta(session="agent-1"))
                assert not result.is_error
        assert b.feedback.learned.affinity(GET, INVOICES) == 0
        received = b.shared.fanout.received
        await a.feedback.flush()
        learned = lambda: b.feedback.learned.affinity(GET, INVOICES) > 0  # noqa: E731
        assert await asyncio.to_thread(within, patient(1.0), learned) is not None
        assert b.feedback.learned.affinity(GET, INVOICES) == 0.5, "B did not load what A learned"
        assert b.shared.fanout.received > received


async def test_over_http_a_session_id_is_its_callers_own_on_every_replica(
    tmp_path: Path, backend_url: str, replica_database: str, redis_url: str, redis_prefix: str
) -> None:
    contracts = [demo_contract_file(tmp_path, name, backend_url) for name in ("crm", "billing")]
    routing = RoutingSettings(enabled=True, top_k=3)
    settings = [
        replica_settings(
            tmp_path, replica_database, redis_url, redis_prefix, n, contracts=contracts, routing=routing
        )
        for n in "ab"
    ]
    with replicas(settings) as (a, b):
        alice, bob = admin_key(a, owner="alice"), admin_key(a, owner="bob")
        async with (
            connect(f"{a.client.base_url}/mcp", token=alice) as alice_on_a,
            connect(f"{b.client.base_url}/mcp", token=alice) as alice_on_b,
            connect(f"{b.client.base_url}/mcp", token=bob) as bob_on_b,
        ):
            routed = await alice_on_a.list_tools(meta=_meta(session="s1", query="look up a customer"))
            again = await alice_on_b.list_tools(meta=_meta(session="s1"))
            assert [t.name for t in again.tools] == [t.name for t in routed.tools]
            other = await bob_on_b.list_tools(meta=_meta(session="s1"))  # same id, another caller
            assert len(other.tools) > len(routed.tools), "bob was served alice's session"
