"""Gateways built in process over one real loopback backend, with limits and (optionally) Redis.

`shop_url` serves `acme:shop:get_item` (GET /items/{item_id}) and counts what it served, so a
test can tell the calls that reached the backend from the ones a limit refused.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from colonnade.calls.envelope import CallRequest, CallResult
from colonnade.calls.manifest import ManifestOverride, Manifests
from colonnade.catalog.catalog import Catalog
from colonnade.config import Settings
from colonnade.contracts.model import Contract
from colonnade.governance.principal import Principal, PrincipalKind
from colonnade.runtime.gateway import Gateway
from tests.support.loopback import serve_in_thread

TOOL = "acme:shop:get_item"
SLOW_TOOL = "acme:shop:slow_item"
SLOW_S = 0.4
BOT = Principal(PrincipalKind.AGENT, "bot", tenant="acme", persona="agent")


class Served:
    def __init__(self) -> None:
        self.hits = 0


@pytest.fixture(scope="module")
def shop() -> Iterator[tuple[str, Served]]:
    served = Served()

    async def item(request: Request) -> JSONResponse:
        served.hits += 1
        return JSONResponse({"item_id": request.path_params["item_id"], "price": 3})

    async def slow(request: Request) -> JSONResponse:
        await asyncio.sleep(SLOW_S)
        served.hits += 1
        return JSONResponse({"item_id": request.path_params["item_id"], "price": 3})

    app = Starlette(routes=[Route("/items/{item_id}", item), Route("/slow/{item_id}", slow)])
    with serve_in_thread(app) as url:
        yield url, served


def shop_contract(base_url: str, *, runtime: dict[str, Any] | None = None) -> Contract:
    """The shop's two reads; `runtime` is given to get_item's endpoint."""
    schema = {
        "type": "object",
        "properties": {"item_id": {"type": "string"}},
        "required": ["item_id"],
        "additionalProperties": False,
    }

    def endpoint(path: str, operation: str) -> dict[str, Any]:
        return {
            "path": path,
            "methods": ["GET"],
            "operation_id": operation,
            "input_schema": schema,
            "llm": {
                "summary": f"{operation} of the shop",
                "intent": "Use in rate-limit tests",
                "tool_name": operation,
                "side_effects": "read",
                "safe_for_agents": True,
                "requires_human_approval": False,
                "examples": [],
            },
        }

    return Contract.model_validate(
        {
            "name": "shop",
            "version": "1.0.0",
            "tenant": "acme",
            "display_name": "Shop",
            "description": "Items, for rate-limit tests.",
            "status": "published",
            "owner": "team-a",
            "backend": {"base_url": base_url},
            "endpoints": [
                {**endpoint("/items/{item_id}", "get_item"), **({"runtime": runtime} if runtime else {})},
                endpoint("/slow/{item_id}", "slow_item"),
            ],
        }
    )


def limit_settings(
    rules: Sequence[dict[str, Any]],
    *,
    redis: tuple[str, str] | None = None,
    replicas: int | None = None,
    replica_id: str | None = None,
) -> Settings:
    shared: dict[str, Any] = {}
    if redis is not None:
        shared = {"redis_url": redis[0], "key_prefix": redis[1], "probe_interval_s": 0.1, "op_timeout_s": 2.0}
        if replica_id is not None:
            shared["replica_id"] = replica_id
    limits: dict[str, Any] = {"rules": list(rules), "heartbeat_s": 0.2}
    if replicas is not None:
        limits["replicas"] = replicas
    return Settings.model_validate({"manifests_dir": None, "shared_state": shared, "limits": limits})


def build_gateway(
    settings: Settings,
    base_url: str,
    *,
    overrides: dict[str, ManifestOverride] | None = None,
    runtime: dict[str, Any] | None = None,
) -> Gateway:
    catalog = Catalog()
    catalog.publish(shop_contract(base_url, runtime=runtime))
    return Gateway(settings, catalog=catalog, manifests=Manifests(overrides))


@contextlib.asynccontextmanager
async def running(gateway: Gateway) -> AsyncIterator[Gateway]:
    """The gateway with its shared state started and its background tasks running (as `serve` does)."""
    await gateway.shared.start()
    try:
        async with gateway.shared.running():
            yield gateway
    finally:
        await gateway.aclose()


async def call(gateway: Gateway, principal: Principal = BOT, tool: str = TOOL, **input: Any) -> CallResult:
    request = CallRequest(tool_id=tool, input={"item_id": "I-1", **input})
    return await gateway.calls.call(request, principal)
