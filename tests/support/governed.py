"""A governed gateway on loopback for tests: real issuer, real backend with a ledger, two tenants.

The gateway (composition root, store, full pipeline) is served by uvicorn; it trusts the test
issuer by its JWKS URL; tenant `acme` serves `items` (team-a, prod) and `lab` (team-a, dev),
tenant `globex` serves `items` (team-b, prod), all over one fault backend whose every request is
logged (`hits`) and whose effects land in its ledger, so a test proves that a refused call did
not reach it. `two_phase=True` adds `acme:holds` (`tests/support/hold_contract.py`).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import yaml
from mcp import Client
from starlette.types import ASGIApp, Receive, Scope, Send

from colonnade.calls.envelope import ENVELOPE_VERSION_HEADER
from colonnade.config import (
    AuthSettings,
    IssuerSettings,
    PolicySettings,
    RoutingSettings,
    ServerSettings,
    Settings,
    TelemetrySettings,
)
from colonnade.governance.personas import PERSONA_SCOPES, Persona
from colonnade.smoke.connect import connect
from tests.support.fault_backend import FaultBackend, create_app
from tests.support.hold_contract import hold_contract
from tests.support.issuer import Issuer, running_issuer
from tests.support.loopback import free_port, serve_in_thread
from tests.support.tenant_contracts import tenant_contract
from tests.surfaces.rest_harness import RunningGateway, serve_gateway

__all__ = ["APIS", "Governed", "governed_gateway"]

APIS = {"acme:items": ("team-a", "prod"), "acme:lab": ("team-a", "dev"), "globex:items": ("team-b", "prod")}


class _Hits:
    """Records the method and path of every request the backend receives."""

    def __init__(self, app: ASGIApp, hits: list[tuple[str, str]]) -> None:
        self.app, self.hits = app, hits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] != "/healthz":
            self.hits.append((scope["method"], scope["path"]))
        await self.app(scope, receive, send)


@dataclass
class Governed:
    running: RunningGateway
    issuer: Issuer
    backend: FaultBackend
    hits: list[tuple[str, str]]
    resource: str
    data_dir: Path
    tokens: dict[str, str] = field(default_factory=dict)
    restarter: Callable[[], None] | None = field(default=None, repr=False)

    def restart(self) -> None:
        """Stop the gateway (it writes what it holds, as at any shutdown) and start it again on the
        same settings and database; the issuer and the backend keep running."""
        assert self.restarter is not None, "this gateway cannot be restarted"
        self.restarter()

    @property
    def base_url(self) -> str:
        return str(self.running.client.base_url).rstrip("/")

    @property
    def mcp_url(self) -> str:
        return f"{self.base_url}/mcp"

    def token(
        self,
        persona: Persona | str,
        *,
        tenant: str | None = "acme",
        team: str | None = None,
        sub: str | None = None,
        scopes: frozenset[str] | None = None,
        **claims: Any,
    ) -> str:
        """An access token of the test issuer for this gateway (every scope of the persona by default)."""
        name = Persona(persona)
        granted = PERSONA_SCOPES[name] if scopes is None else scopes
        body: dict[str, Any] = {
            "sub": sub or f"{name.value}-1",
            "persona": name.value,
            "scope": " ".join(sorted(granted)),
        }
        if tenant is not None:
            body["tenant"] = tenant
        if team is not None:
            body["team"] = team
        body.update(claims)
        return self.issuer.mint(body, audience=self.resource)

    def rest(self, token: str | None) -> httpx2.Client:
        """A REST client that reads the full envelope (version 2: `pending`, `success_prep`)."""
        headers = {ENVELOPE_VERSION_HEADER: "2"}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        return httpx2.Client(base_url=self.base_url, headers=headers, timeout=30.0)

    def call(self, token: str | None, tool: str, **arguments: Any) -> tuple[int, dict[str, Any]]:
        with self.rest(token) as client:
            response = client.post("/v1/calls", json={"tool_id": tool, "input": arguments})
        return response.status_code, response.json()

    @contextlib.asynccontextmanager
    async def mcp(self, token: str | None, mode: str = "auto") -> AsyncIterator[Client]:
        async with connect(self.mcp_url, token=token, mode=mode) as client:  # type: ignore[arg-type]
            yield client

    def effects(self) -> list[dict[str, Any]]:
        return list(self.backend.ledger)

    def backend_hits(self) -> list[tuple[str, str]]:
        return list(self.hits)


def _contract_files(directory: Path, backend_url: str, *, two_phase: bool = False) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    contracts = [
        tenant_contract(*api.split(":"), backend_url, owner=owner, environment=environment)
        for api, (owner, environment) in APIS.items()
    ]
    if two_phase:
        contracts.append(hold_contract("acme", backend_url))
    for contract in contracts:
        tenant, name = contract.tenant, contract.name
        path = directory / f"{tenant}-{name}.yaml"
        path.write_text(yaml.safe_dump(contract.model_dump(mode="json", exclude_none=True), sort_keys=False))
        paths.append(path)
    return paths


@contextlib.contextmanager
def governed_gateway(
    tmp: Path,
    *,
    database_url: str | None = None,
    policy: PolicySettings | None = None,
    server: dict[str, Any] | None = None,
    two_phase: bool = False,
    servers: list[dict[str, Any]] | None = None,
    telemetry: dict[str, Any] | None = None,
    **auth: Any,
) -> Iterator[Governed]:
    """Issuer, backend and gateway, all on loopback; `server` and `auth` override ServerSettings and
    AuthSettings fields, `telemetry` TelemetrySettings fields; `servers` are downstream MCP server
    entries, as in colonnade.yaml."""
    backend, hits = FaultBackend(), []
    with running_issuer() as issuer, serve_in_thread(_Hits(create_app(backend), hits)) as backend_url:
        port = free_port()
        resource = f"http://127.0.0.1:{port}/mcp"
        issuer_settings = IssuerSettings(
            issuer=issuer.url, jwks_url=issuer.jwks_url, algorithms=["RS256", "ES256"]
        )
        settings = Settings(
            data_dir=tmp / "data",
            database_url=database_url,
            contracts=_contract_files(tmp / "contracts", backend_url, two_phase=two_phase),
            manifests_dir=None,
            routing=RoutingSettings(enabled=True),
            server=ServerSettings(**{"host": "127.0.0.1", "port": port, "page_size": 3, **(server or {})}),
            auth=AuthSettings(**{"issuers": [issuer_settings], "resource": resource, **auth}),
            policy=policy or PolicySettings(),
            servers=servers or [],
            telemetry=TelemetrySettings(**(telemetry or {})),
        )
        with contextlib.ExitStack() as serving:
            running = serving.enter_context(serve_gateway(settings))
            governed = Governed(running, issuer, backend, hits, resource, tmp / "data")

            def restart() -> None:
                serving.close()
                governed.running = serving.enter_context(serve_gateway(settings))

            governed.restarter = restart
            yield governed
