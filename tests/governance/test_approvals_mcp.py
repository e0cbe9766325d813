"""Approvals with the official MCP SDK client, in both protocol eras, against a real backend ledger.

An interactive client (one with an elicitation callback) is asked to confirm: on 2026-07-28 by an
`input_required` result the SDK client answers and retries (over HTTP), on 2025-11-25 by
`elicitation/create` during the call where the transport has a back channel (in-process here, as
stdio; the HTTP endpoint answers POSTs as JSON, so handshake-era HTTP clients get `pending` without
a question). The confirmation is recorded, but the call still waits for a second person; a client
without elicitation gets `pending` at once. Once approved, the call runs when retried with the
token in `_meta["colonnade/approval_token"]`.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from colonnade.calls.envelope import APPROVAL_TOKEN_META_KEY
from colonnade.surfaces.mcp.render import RESULT_META_KEY
from tests.support.governed import Governed

DROP = "acme:items:drop_item"


@contextlib.asynccontextmanager
async def _client(
    governed: Governed, token: str, mode: str, answer: dict[str, Any] | None, asked: list[str]
) -> AsyncIterator[Client]:
    """The SDK client; with `answer`, it declares elicitation and answers every question so."""

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        assert answer is not None
        return types.ElicitResult(**answer)

    callback = elicit if answer is not None else None
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30.0) as http,
        Client(
            streamable_http_client(governed.mcp_url, http_client=http),
            mode=mode,  # type: ignore[arg-type]
            elicitation_callback=callback,  # type: ignore[arg-type]
        ) as client,
    ):
        await client.list_tools()
        yield client


def _envelope(result: types.CallToolResult) -> dict[str, Any]:
    return dict((result.meta or {})[RESULT_META_KEY])


def _drops(governed: Governed, item: str) -> int:
    return sum(1 for effect in governed.effects() if effect["kind"] == "drop" and effect["item_id"] == item)


def _approval(governed: Governed, token: str, approval_id: str) -> dict[str, Any]:
    with governed.rest(token) as client:
        return dict(client.get(f"/v1/approvals/{approval_id}").json()["approval"])


def _approve(governed: Governed, token: str, approval_id: str) -> None:
    with governed.rest(token) as client:
        response = client.post(f"/v1/approvals/{approval_id}/approve", json={"comment": "fine"})
    assert response.status_code == 200, response.text


async def test_confirmed_by_the_user_then_approved_then_run(governed: Governed) -> None:
    alice, bob = governed.token("admin", sub="alice"), governed.token("admin", sub="bob")
    item, mode = "M-modern", "auto"
    wire = governed.running.gateway.catalog.get(DROP).wire_name  # type: ignore[union-attr]
    asked: list[str] = []
    async with _client(
        governed, alice, mode, {"action": "accept", "content": {"confirm": True}}, asked
    ) as client:
        parked = await client.call_tool(wire, {"item_id": item})
        envelope = _envelope(parked)
        assert parked.is_error and envelope["status"] == "pending", envelope
        approval_id = envelope["pending"]["token"]
        assert len(asked) == 1 and DROP in asked[0] and approval_id in asked[0]
        shown = _approval(governed, alice, approval_id)
        assert shown["confirmed_by_user"] is True and shown["state"] == "pending"
        assert _drops(governed, item) == 0

        _approve(governed, bob, approval_id)
        token = _approval(governed, alice, approval_id)["token"]
        ran = await client.call_tool(wire, {"item_id": item}, meta={APPROVAL_TOKEN_META_KEY: token})
        assert not ran.is_error, ran
        assert _drops(governed, item) == 1

        replayed = await client.call_tool(wire, {"item_id": item}, meta={APPROVAL_TOKEN_META_KEY: token})
        assert _envelope(replayed)["error"]["code"] == "A-AUTH-APPROVAL-REPLAY"
        assert _drops(governed, item) == 1


async def test_declined_by_the_user_withdraws_the_call(governed: Governed) -> None:
    alice, bob = governed.token("admin", sub="alice"), governed.token("admin", sub="bob")
    item, mode = "N-modern", "auto"
    wire = governed.running.gateway.catalog.get(DROP).wire_name  # type: ignore[union-attr]
    asked: list[str] = []
    async with _client(governed, alice, mode, {"action": "decline"}, asked) as client:
        declined = await client.call_tool(wire, {"item_id": item})
    envelope = _envelope(declined)
    assert envelope["error"]["code"] == "P-PRECOND-APPROVAL-DENIED", envelope
    with governed.rest(bob) as rest:
        listed = rest.get("/v1/approvals?state=denied").json()["approvals"]
    withdrawn = [entry for entry in listed if entry["arguments"] == {"item_id": item}]
    assert len(withdrawn) == 1 and withdrawn[0]["approver"] == "user:alice"
    assert _drops(governed, item) == 0


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_client_without_elicitation_gets_pending(governed: Governed, mode: str) -> None:
    alice = governed.token("admin", sub="alice")
    item = f"Q-{mode}"
    wire = governed.running.gateway.catalog.get(DROP).wire_name  # type: ignore[union-attr]
    async with _client(governed, alice, mode, None, []) as client:
        parked = await client.call_tool(wire, {"item_id": item})
    envelope = _envelope(parked)
    assert envelope["status"] == "pending" and envelope["pending"]["reason"] == "awaiting_approval"
    assert "pending (awaiting_approval)" in parked.content[0].text  # type: ignore[union-attr]
    assert _approval(governed, alice, envelope["pending"]["token"])["confirmed_by_user"] is False
    assert _drops(governed, item) == 0


async def test_a_handshake_era_http_client_is_asked_on_its_sessions_stream(governed: Governed) -> None:
    """2025-11-25 over HTTP: the session answers over SSE (`server.mcp_session_streams`), so the
    gateway can send `elicitation/create` during the call; the confirmation is recorded, and the call
    still waits for a second person."""
    alice = governed.token("admin", sub="alice")
    wire = governed.running.gateway.catalog.get(DROP).wire_name  # type: ignore[union-attr]
    asked: list[str] = []
    answer = {"action": "accept", "content": {"confirm": True}}
    async with _client(governed, alice, "legacy", answer, asked) as client:
        parked = await client.call_tool(wire, {"item_id": "L-http"})
    envelope = _envelope(parked)
    assert envelope["status"] == "pending" and len(asked) == 1 and "needs approval" in asked[0]
    assert _approval(governed, alice, envelope["pending"]["token"])["confirmed_by_user"] is True
    assert _drops(governed, "L-http") == 0


@pytest.mark.parametrize("confirm", [True, False])
def test_a_handshake_era_client_with_a_back_channel_is_asked(governed: Governed, confirm: bool) -> None:
    """In process (as over stdio) the 2025-11-25 client gets `elicitation/create` during the call."""
    gateway = governed.running.gateway
    bob = governed.token("admin", sub="bob")
    item = f"L-{confirm}"
    wire = gateway.catalog.get(DROP).wire_name  # type: ignore[union-attr]
    asked: list[str] = []

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"confirm": confirm})

    async def call(meta: dict[str, Any] | None = None) -> types.CallToolResult:
        async with Client(gateway.mcp.server, mode="legacy", elicitation_callback=elicit) as client:
            return await client.call_tool(wire, {"item_id": item}, meta=meta)

    first = _envelope(governed.running.run(call()))
    assert len(asked) == 1
    if not confirm:
        assert first["error"]["code"] == "P-PRECOND-APPROVAL-DENIED"
        assert _drops(governed, item) == 0
        return
    approval_id = first["pending"]["token"]
    assert _approval(governed, bob, approval_id)["confirmed_by_user"] is True
    _approve(governed, bob, approval_id)
    record = governed.running.run(gateway.governance.approvals.store.get(approval_id))  # type: ignore[union-attr]
    ran = governed.running.run(call({APPROVAL_TOKEN_META_KEY: record.token}))
    assert not ran.is_error, ran
    assert _drops(governed, item) == 1
