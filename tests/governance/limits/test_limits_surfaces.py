"""What a caller sees of a limit: REST's Retry-After and RateLimit fields, MCP's typed error."""

from __future__ import annotations

import re

import httpx2
from mcp import Client
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from colonnade.runtime.gateway import Gateway
from colonnade.surfaces.mcp.render import RESULT_META_KEY
from tests.governance.limits.conftest import Served, build_gateway, limit_settings
from tests.support.loopback import serve_in_thread

CALL = {"tool_id": "acme:shop:get_item", "input": {"item_id": "I-1"}}


def _closing(gateway: Gateway) -> ASGIApp:
    """The gateway's app, closing the gateway on the server's own loop when the server stops."""
    app = gateway.http_app()

    async def closing(scope: Scope, receive: Receive, send: Send) -> None:
        async def sending(message: Message) -> None:
            if message["type"] == "lifespan.shutdown.complete":
                await gateway.aclose()
            await send(message)

        await app(scope, receive, sending if scope["type"] == "lifespan" else send)

    return closing


def test_rest_names_the_policy_the_remaining_calls_and_when_to_come_back(shop: tuple[str, Served]) -> None:
    rules = [
        {"name": "per-caller", "per": "principal", "requests": 3, "window_s": 60},
        {"name": "one-at-once", "concurrency": 1},
    ]
    gateway = build_gateway(limit_settings(rules), shop[0])
    app = _closing(gateway)
    with serve_in_thread(app, lifespan="on") as url, httpx2.Client(base_url=url) as client:
        answers = [client.post("/v1/calls", json=CALL) for _ in range(4)]
    assert [a.status_code for a in answers] == [200] * 4, "a well-formed envelope gets 200"
    assert [a.json()["status"] for a in answers] == ["success"] * 3 + ["retryable_error"]

    first = answers[0].headers
    assert first["ratelimit-policy"] == '"per-caller";q=3;w=60, "one-at-once";q=1;qu="concurrent-requests"'
    assert re.fullmatch(r'"per-caller";r=2;t=(59|60), "one-at-once";r=0', first["ratelimit"])
    assert "retry-after" not in first
    third = answers[2].headers["ratelimit"]
    assert third.startswith('"per-caller";r=0;'), third

    refused = answers[3]
    error = refused.json()["error"]
    assert error["code"] == "R-CAP-RATE-LIMITED" and error["details"]["limit_name"] == "per-caller"
    wait_s = -(-error["details"]["retry_after_ms"] // 1000)
    assert refused.headers["retry-after"] == str(wait_s) and 1 <= wait_s <= 60
    assert refused.headers["ratelimit"].startswith(f'"per-caller";r=0;t={wait_s}')
    assert refused.headers["ratelimit-policy"] == first["ratelimit-policy"]


async def test_mcp_carries_the_typed_error_in_the_result(shop: tuple[str, Served]) -> None:
    rules = [{"name": "local-user", "principals": ["user:local"], "requests": 1, "window_s": 60}]
    gateway = build_gateway(limit_settings(rules), shop[0])
    try:
        wire = gateway.catalog.get("acme:shop:get_item").wire_name  # type: ignore[union-attr]
        async with Client(gateway.mcp.server) as client:
            ran = await client.call_tool(wire, {"item_id": "I-1"})
            refused = await client.call_tool(wire, {"item_id": "I-1"})
        assert not ran.is_error, ran
        assert refused.is_error
        envelope = dict((refused.meta or {})[RESULT_META_KEY])
        assert envelope["status"] == "retryable_error"
        assert envelope["error"]["code"] == "R-CAP-RATE-LIMITED"
        assert envelope["error"]["details"]["retry_after_ms"] > 0
    finally:
        await gateway.aclose()
