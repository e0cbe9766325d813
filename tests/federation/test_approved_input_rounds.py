"""A proxied tool that needs approval and then asks its caller questions: the approval is spent once.

The conformance reference server (over HTTP) answers `test_input_required_result_request_state`
with a 2026-07-28 input round before it does anything; here the gateway also marks it destructive,
so it waits for an approver first. The official SDK client confirms the approval question, an
approver approves with the CLI, the client retries with the approval token, the server's own
question reaches the client, and the client's answer (a retry carrying the same `_meta`, token
included) finishes the call once. A second use of the token after that is refused as a replay.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import Client

from colonnade.calls.envelope import APPROVAL_TOKEN_META_KEY
from colonnade.surfaces.mcp.render import RESULT_META_KEY
from colonnade.surfaces.mcp.round_state import APPROVED_PREFIX
from tests.federation.conftest import Federation, approve_by_cli, run_gateway
from tests.support.mcp_servers import reference_http

pytestmark = pytest.mark.e2e

TOOL = "test_input_required_result_request_state"
NAME = f"default__reference__{TOOL}"
CANONICAL = "default:reference:test_input_required_result_request_state"


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Federation, Path]]:
    tmp = tmp_path_factory.mktemp("approved-rounds")
    with reference_http(tmp / "reference.log") as url:
        server = {
            "name": "reference",
            "transport": "http",
            "url": url,
            "tools": {"test_input_required_result_request_state": {"requires_human_approval": True}},
        }
        with run_gateway(tmp / "gateway", [server]) as federation:
            yield federation, tmp / "gateway"


def _envelope(result: types.CallToolResult) -> dict[str, Any]:
    return dict((result.meta or {})[RESULT_META_KEY])


def _text(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


def _token(federation: Federation, approval_id: str) -> str:
    response = httpx2.get(f"{federation.base}/v1/approvals/{approval_id}", timeout=10)
    response.raise_for_status()
    return str(response.json()["approval"]["token"])


async def _approved_token(client: Client, name: str, federation: Federation, folder: Path) -> str:
    """Ask for the call (the client confirms), have Bob approve it with the CLI, return its token."""
    parked = await client.call_tool(name, {})
    shown = _envelope(parked)
    assert shown["status"] == "pending", shown
    approve_by_cli(folder, shown["pending"]["token"], "--comment", "fine")
    return _token(federation, shown["pending"]["token"])


@pytest.mark.parametrize("endpoint", ["aggregate", "own"])
async def test_an_approved_call_answers_the_servers_question_and_spends_its_token_once(
    gated: tuple[Federation, Path], endpoint: str
) -> None:
    federation, folder = gated
    url, name = (federation.mcp, NAME) if endpoint == "aggregate" else (federation.server("reference"), TOOL)
    asked: list[str] = []

    async def answer(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        if CANONICAL in params.message:  # the gateway's approval question
            return types.ElicitResult(action="accept", content={"confirm": True})
        return types.ElicitResult(action="accept", content={"ok": True})  # the server's own

    async with Client(url, elicitation_callback=answer) as client:
        assert client.protocol_version == "2026-07-28"
        token = await _approved_token(client, name, federation, folder)
        ran = await client.call_tool(name, {}, meta={APPROVAL_TOKEN_META_KEY: token})
        assert not ran.is_error, _envelope(ran)
        assert _text(ran) == "Request state state-ok echoed; confirmation: accept"
        assert [m for m in asked if CANONICAL not in m] == ["Please confirm"]

        replayed = await client.call_tool(name, {}, meta={APPROVAL_TOKEN_META_KEY: token})
    assert _envelope(replayed)["error"]["code"] == "A-AUTH-APPROVAL-REPLAY"


async def test_an_answer_given_twice_runs_once(gated: tuple[Federation, Path]) -> None:
    """Driven by hand: the question's state names a round of the gateway's, then the server's own
    (which the server verifies when it comes back); answering it a second time is a replay."""
    federation, folder = gated
    ok = {"confirm": types.ElicitResult(action="accept", content={"ok": True})}

    async def confirm(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"confirm": True})

    async with Client(federation.mcp, elicitation_callback=confirm) as client:
        token = await _approved_token(client, NAME, federation, folder)
        meta = {APPROVAL_TOKEN_META_KEY: token}
        session = client.session
        asked = await session.call_tool(NAME, {}, meta=meta, allow_input_required=True)
        assert isinstance(asked, types.InputRequiredResult), asked
        state = asked.request_state or ""
        assert state.startswith(APPROVED_PREFIX) and ":=" in state  # then the server's own (sealed) state
        first = await session.call_tool(
            NAME, {}, meta=meta, input_responses=ok, request_state=state, allow_input_required=True
        )
        again = await session.call_tool(
            NAME, {}, meta=meta, input_responses=ok, request_state=state, allow_input_required=True
        )
    assert isinstance(first, types.CallToolResult) and not first.is_error, first
    assert isinstance(again, types.CallToolResult)
    assert _envelope(again)["error"]["code"] == "A-AUTH-APPROVAL-REPLAY"


@pytest.mark.parametrize("endpoint", ["aggregate", "own"])
async def test_a_keyed_call_answers_the_servers_questions_then_replays_its_outcome(
    gated: tuple[Federation, Path], endpoint: str
) -> None:
    """An input round is not the call's outcome: the key is not spent on it, the answers run with
    the same key, and the finished outcome is what a resend with that key gets back, as the server
    first answered it (its content blocks, not their JSON)."""
    federation, _ = gated
    tool = "test_input_required_result_multi_round"
    url, name = (
        (federation.mcp, f"default__reference__{tool}")
        if endpoint == "aggregate"
        else (
            federation.server("reference"),
            tool,
        )
    )
    meta = {"colonnade/request": {"constraints": {"idempotency_key": f"rounds-{endpoint}"}}}

    async def answer(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        field = "color" if "color" in params.message else "name"
        return types.ElicitResult(action="accept", content={field: "Ada" if field == "name" else "blue"})

    async with Client(url, elicitation_callback=answer) as client:
        done = await client.call_tool(name, {}, meta=meta)
        again = await client.call_tool(name, {}, meta=meta)
    assert not done.is_error, _envelope(done)
    assert _text(done) == "Favourite colour: blue"
    assert _text(again) == "Favourite colour: blue"
    assert any(warning.startswith("replay of ") for warning in _envelope(again)["warnings"])
