"""The metrics history a gateway rolls up from its calls is in the store: a restart loses nothing."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from mcp import Client

from colonnade.runtime.gateway import Gateway
from examples.demo_backend import create_app
from tests.support.loopback import serve_in_thread
from tests.surfaces.rest_harness import demo_contract_file, gateway_settings

GET = "acme:crm:get_customer"


@pytest.fixture(scope="module")
def backend_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    app = create_app(tmp_path_factory.mktemp("backend") / "demo.db")
    with serve_in_thread(app, lifespan="on") as url:
        yield url


async def test_metrics_history_survives_a_restart(tmp_path: Path, backend_url: str) -> None:
    settings = gateway_settings(tmp_path / "data", [demo_contract_file(tmp_path, "crm", backend_url)])
    since = datetime.now(UTC) - timedelta(minutes=5)
    gateway = await Gateway.open(settings)
    try:
        async with Client(gateway.mcp.server) as client:
            for customer in ("C-1001", "C-1002", "C-404"):
                await client.call_tool("acme__crm__get_customer", {"customer_id": customer})
    finally:
        await gateway.aclose()  # the calls' round is written at close

    restarted = await Gateway.open(settings)
    try:
        store = restarted.history_store
        assert store is not None
        minutes = (await store.series(60, "tool", since))[GET]
        assert sum(point.calls for point in minutes) == 3
        assert sum(point.errors for point in minutes) == 1  # C-404: the backend's not-found
        api = (await store.series(300, "api", since))["acme:crm"]
        assert sum(point.calls for point in api) == 3
        assert all(point.p95_s is not None for point in minutes)
    finally:
        await restarted.aclose()
