"""Host/Origin checks against DNS rebinding: on every bind, every route, `/metrics` like the rest."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.datastructures import Headers

from colonnade.config import ServerSettings
from colonnade.surfaces.edge import OriginPolicy
from tests.surfaces.rest_harness import RunningGateway, demo_contract_file, gateway_settings, serve_gateway

_MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "0"},
}


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "localhost", "::1", "0.0.0.0", "gateway.example"])
def test_every_bind_keeps_the_host_check_on(host: str) -> None:
    policy = OriginPolicy.for_bind(host)
    assert policy.refusal(Headers({"host": "attacker.example"})) is not None
    assert policy.refusal(Headers({"host": "evil.example:8765"})) is not None
    assert policy.refusal(Headers({"host": "127.0.0.1:8765"})) is None
    refused = policy.refusal(Headers({"host": "localhost:8765", "origin": "http://evil.example"}))
    assert refused is not None and refused.http_status == 403


def test_a_loopback_address_actually_bound_is_a_valid_host() -> None:
    assert OriginPolicy.for_bind("127.0.0.2").refusal(Headers({"host": "127.0.0.2:9000"})) is None
    assert OriginPolicy.for_bind("::1").refusal(Headers({"host": "[::1]:9000"})) is None
    assert OriginPolicy.for_bind("127.0.0.1").refusal(Headers({"host": "127.0.0.2:9000"})) is not None


def test_public_names_are_served_only_when_configured() -> None:
    policy = OriginPolicy.for_bind(
        "0.0.0.0", ["gw.example.com", "gw.example.com:*"], ["https://gw.example.com"]
    )
    assert policy.refusal(Headers({"host": "gw.example.com"})) is None
    assert policy.refusal(Headers({"host": "gw.example.com:443", "origin": "https://gw.example.com"})) is None
    assert policy.refusal(Headers({"host": "gw.example.com", "origin": "https://evil.example"})) is not None
    assert OriginPolicy.for_bind("0.0.0.0").refusal(Headers({"host": "gw.example.com"})) is not None


def _serve(folder: Path, backend_url: str, host: str) -> Iterator[RunningGateway]:
    contracts = [demo_contract_file(folder, "crm", backend_url)]
    settings = gateway_settings(folder / "data", contracts)
    settings = settings.model_copy(update={"server": ServerSettings(host=host, port=0)})
    with serve_gateway(settings) as running:
        yield running


@pytest.fixture(scope="module")
def on_127_0_0_1(backend_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningGateway]:
    yield from _serve(tmp_path_factory.mktemp("gw1"), backend_url, "127.0.0.1")


@pytest.fixture(scope="module")
def on_127_0_0_2(backend_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningGateway]:
    yield from _serve(tmp_path_factory.mktemp("gw2"), backend_url, "127.0.0.2")


def test_metrics_refuse_a_foreign_host_or_origin(on_127_0_0_1: RunningGateway) -> None:
    client = on_127_0_0_1.client
    assert client.get("/metrics").status_code == 200
    rebound = client.get("/metrics", headers={"host": "attacker.example"})
    assert rebound.status_code == 421
    assert "attacker.example" in rebound.text
    assert client.get("/metrics", headers={"origin": "http://attacker.example"}).status_code == 403


def test_a_gateway_on_another_loopback_address_is_guarded_and_reachable(on_127_0_0_2: RunningGateway) -> None:
    client = on_127_0_0_2.client
    for path in ("/v1/tools", "/ui/catalog", "/metrics"):
        assert client.get(path).status_code == 200, path  # its own address is a valid Host
        assert client.get(path, headers={"host": "attacker.example"}).status_code == 421, path
    listed = client.post(
        "/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": _MODERN_META}},
        headers={
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/list",
        },
    )
    assert listed.status_code == 200, listed.text
    assert [tool["name"] for tool in listed.json()["result"]["tools"]]
