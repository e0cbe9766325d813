"""The aggregate `/mcp` relays a proxied tool's progress, questions and input rounds to its caller.

Behind one `colonnade serve` (and one `colonnade serve --stdio`): the conformance reference server
over HTTP, whose tools report progress, ask the user (elicitation, sampling) on the handshake era
and answer 2026-07-28 input rounds. The official SDK client calls its tools under their namespaced
names on `/mcp`, in both eras: over HTTP (a handshake-era session that declares elicitation is
answered over SSE) and over stdio.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
import yaml
from mcp import Client, StdioServerParameters

from colonnade.surfaces.mcp.client_relay import STATE_PREFIX
from colonnade.surfaces.mcp.confirmation import STATE_PREFIX as APPROVAL_PREFIX
from colonnade.surfaces.mcp.render import RESULT_META_KEY
from tests.federation.conftest import COLONNADE, Federation, run_gateway
from tests.support.mcp_servers import EVERYTHING, node_stdio, reference_http

pytestmark = pytest.mark.e2e

TOOL = "default__reference__"
PARKED = f"{TOOL}test_simple_text"  # made destructive below: it waits for approval
USER = {"username": "ada", "email": "ada@example.com"}


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[dict[str, Any]]]:
    with reference_http(tmp_path_factory.mktemp("relay") / "reference.log") as url:
        yield [
            {
                "name": "reference",
                "transport": "http",
                "url": url,
                "tools": {"test_simple_text": {"side_effects": "destructive"}},
            }
        ]


@pytest.fixture(scope="module")
def federation(
    servers: list[dict[str, Any]], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Federation]:
    everything = node_stdio("everything", EVERYTHING, "stdio")  # a handshake-era server: it sends requests
    with run_gateway(tmp_path_factory.mktemp("relay-gateway"), [*servers, everything]) as gateway:
        yield gateway


@pytest.fixture(scope="module")
def stdio(servers: list[dict[str, Any]], tmp_path_factory: pytest.TempPathFactory) -> StdioServerParameters:
    """`colonnade serve --stdio` in a folder of its own, with the same server behind it."""
    folder = tmp_path_factory.mktemp("relay-stdio")
    config = {"data_dir": str(folder / "data"), "servers": servers}
    (folder / "colonnade.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    env = {k: v for k, v in os.environ.items() if not k.startswith("COLONNADE_")}
    return StdioServerParameters(command=str(COLONNADE), args=["serve", "--stdio"], cwd=str(folder), env=env)


@contextlib.asynccontextmanager
async def over_stdio(params: StdioServerParameters, mode: str, **callbacks: Any) -> AsyncIterator[Client]:
    """The SDK client on a stdio gateway, once the reference server's tools are in its catalog."""
    async with Client(params, mode=mode, **callbacks) as client:  # type: ignore[arg-type]
        deadline = time.monotonic() + 60
        while f"{TOOL}test_elicitation" not in {t.name for t in (await client.list_tools()).tools}:
            assert time.monotonic() < deadline, "the stdio gateway never listed the reference server's tools"
            await anyio.sleep(0.2)
        yield client


async def elicit_user(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content=USER)


async def elicit_name(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    field = "color" if "color" in params.message else "name"
    return types.ElicitResult(action="accept", content={field: "Ada" if field == "name" else "blue"})


async def elicit_ok(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"ok": True})


async def sample(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text="Paris"), model="test-model"
    )


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


def envelope(result: types.CallToolResult) -> dict[str, Any]:
    return dict((result.meta or {})[RESULT_META_KEY])


class Progress:
    def __init__(self) -> None:
        self.seen: list[tuple[float, float | None]] = []

    async def __call__(self, value: float, total: float | None, message: str | None) -> None:
        self.seen.append((value, total))


# -- handshake era: questions on the call's stream, progress to the caller's token ----------------


async def test_a_handshake_era_http_session_is_asked_and_hears_progress(federation: Federation) -> None:
    progress = Progress()
    async with Client(federation.mcp, mode="legacy", elicitation_callback=elicit_user) as client:
        asked = await client.call_tool(f"{TOOL}test_elicitation", {"message": "Who are you?"})
        ran = await client.call_tool(f"{TOOL}test_tool_with_progress", {}, progress_callback=progress)
    assert "ada@example.com" in text_of(asked) and asked.is_error is False, text_of(asked)
    assert envelope(asked)["provenance"]["tool_id"] == "default:reference:test_elicitation"
    assert ran.is_error is False
    assert progress.seen == [(0, 100), (50, 100), (100, 100)]


async def test_a_handshake_era_servers_requests_reach_the_caller(federation: Federation) -> None:
    """`server-everything` asks with `elicitation/create` on its own session; progress by token."""
    asked: list[str] = []

    async def answer(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"name": "Ada Lovelace", "check": True})

    progress = Progress()
    async with Client(federation.mcp, mode="legacy", elicitation_callback=answer) as client:
        elicited = await client.call_tool("default__everything__trigger-elicitation-request", {})
        ran = await client.call_tool(
            "default__everything__trigger-long-running-operation",
            {"duration": 1, "steps": 3},
            progress_callback=progress,
        )
    assert len(asked) == 1 and "Ada Lovelace" in text_of(elicited), text_of(elicited)
    assert ran.is_error is False
    assert [value for value, _ in progress.seen] == [1, 2, 3]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_stdio_caller_is_asked_and_hears_progress(stdio: StdioServerParameters, mode: str) -> None:
    progress = Progress()
    callbacks = {"elicitation_callback": elicit_user, "sampling_callback": sample}
    async with over_stdio(stdio, mode, **callbacks) as client:
        asked = await client.call_tool(f"{TOOL}test_elicitation", {"message": "Who are you?"})
        sampled = await client.call_tool(f"{TOOL}test_sampling", {"prompt": "Capital of France?"})
        ran = await client.call_tool(f"{TOOL}test_tool_with_progress", {}, progress_callback=progress)
    assert "ada@example.com" in text_of(asked), text_of(asked)
    assert text_of(sampled) == "LLM response: Paris"
    assert ran.is_error is False
    assert progress.seen == [(0, 100), (50, 100), (100, 100)]


async def test_a_2026_stdio_caller_that_set_a_log_level_hears_the_servers_logs(
    stdio: StdioServerParameters,
) -> None:
    lines: list[str] = []

    async def log(params: types.LoggingMessageNotificationParams) -> None:
        lines.append(str(params.data))

    async with over_stdio(stdio, "auto", log_level="info", logging_callback=log) as client:
        assert client.protocol_version == "2026-07-28"
        result = await client.call_tool(f"{TOOL}test_tool_with_logging", {})
    assert result.is_error is False
    assert lines == ["Tool execution started", "Tool processing data", "Tool execution completed"]


# -- 2026-07-28: the server's input rounds go back to the caller, its retry goes to the server ------


async def test_a_2026_caller_answers_the_servers_input_rounds(federation: Federation) -> None:
    async with Client(federation.mcp, elicitation_callback=elicit_name) as client:
        assert client.protocol_version == "2026-07-28"
        hello = await client.call_tool(f"{TOOL}test_input_required_result_elicitation", {})
        two_rounds = await client.call_tool(f"{TOOL}test_input_required_result_multi_round", {})
        sealed = await client.call_tool(f"{TOOL}test_input_required_result_tampered_state", {})
    assert text_of(hello) == "Hello, Ada!"
    assert text_of(two_rounds) == "Favourite colour: blue"
    assert text_of(sealed).startswith("State verified: ")  # the server's sealed state came back intact
    assert envelope(two_rounds)["status"] == "success"


async def test_the_servers_state_and_the_approval_state_are_never_confused(federation: Federation) -> None:
    """Driven by hand: the server's state is handed out behind a prefix of its own; a state without
    it (the server's own, or the approval confirmation's) never reaches the server."""
    name = f"{TOOL}test_input_required_result_request_state"
    ok = {"confirm": types.ElicitResult(action="accept", content={"ok": True})}
    async with Client(federation.mcp, elicitation_callback=elicit_ok) as client:
        session = client.session
        await client.list_tools()
        asked = await session.call_tool(name, {}, allow_input_required=True)
        assert isinstance(asked, types.InputRequiredResult), asked
        handed_out = asked.request_state or ""
        assert handed_out.startswith(STATE_PREFIX)
        servers_own = handed_out.removeprefix(STATE_PREFIX)  # sealed by the server
        bare = await session.call_tool(
            name, {}, input_responses=ok, request_state=servers_own, allow_input_required=True
        )
        answered = await session.call_tool(
            name, {}, input_responses=ok, request_state=handed_out, allow_input_required=True
        )
        parked = await session.call_tool(PARKED, {}, allow_input_required=True)
    assert isinstance(bare, types.InputRequiredResult)  # the server saw no state, so it asked again
    assert isinstance(answered, types.CallToolResult)
    assert text_of(answered) == "Request state state-ok echoed; confirmation: accept"
    assert isinstance(parked, types.InputRequiredResult)  # the gateway's confirmation, not the server's
    assert (parked.request_state or "").startswith(APPROVAL_PREFIX)


# -- callers that can be asked nothing; approvals ------------------------------------------------------


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_caller_without_elicitation_gets_input_required(federation: Federation, mode: str) -> None:
    name = "test_elicitation" if mode == "legacy" else "test_input_required_result_elicitation"
    async with Client(federation.mcp, mode=mode) as client:  # type: ignore[arg-type]
        result = await client.call_tool(f"{TOOL}{name}", {"message": "Who are you?"})
    assert result.is_error is True
    assert envelope(result)["error"]["code"] == "P-PRECOND-INPUT-REQUIRED"


async def test_a_2026_caller_gets_no_round_it_said_it_cannot_answer(federation: Federation) -> None:
    """It declared elicitation, not sampling: the server's sampling round ends the call, typed."""
    async with Client(federation.mcp, elicitation_callback=elicit_name) as client:
        result = await client.call_tool(f"{TOOL}test_input_required_result_sampling", {})
    assert envelope(result)["error"]["code"] == "P-PRECOND-INPUT-REQUIRED"
    assert "capital_question" in envelope(result)["error"]["message"]


async def test_a_stdio_caller_without_elicitation_gets_input_required(stdio: StdioServerParameters) -> None:
    """Over stdio the gateway could send it a request, but it declared nothing it could answer."""
    async with over_stdio(stdio, "legacy") as client:
        result = await client.call_tool(f"{TOOL}test_elicitation", {"message": "Who are you?"})
    assert envelope(result)["error"]["code"] == "P-PRECOND-INPUT-REQUIRED"


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_proxied_tool_awaiting_approval_is_still_confirmed(federation: Federation, mode: str) -> None:
    asked: list[str] = []

    async def confirm(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"confirm": True})

    async with Client(federation.mcp, mode=mode, elicitation_callback=confirm) as client:  # type: ignore[arg-type]
        parked = await client.call_tool(PARKED, {})
    shown = envelope(parked)
    assert shown["status"] == "pending" and shown["pending"]["reason"] == "awaiting_approval", shown
    assert len(asked) == 1 and "default:reference:test_simple_text" in asked[0]
    approval = _approval(federation, shown["pending"]["token"])
    assert approval["confirmed_by_user"] is True and approval["state"] == "pending"


def _approval(federation: Federation, approval_id: str) -> dict[str, Any]:
    response = httpx2.get(f"{federation.base}/v1/approvals/{approval_id}", timeout=10)
    response.raise_for_status()
    return dict(response.json()["approval"])
