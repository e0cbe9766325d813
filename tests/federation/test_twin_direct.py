"""A handshake-era client of `/servers/{name}/mcp` whose server speaks 2026-07-28: its quiet calls
are POSTed directly inside the gateway's handshake-era twin session, the others take the SDK's path.

Behind one gateway: the fault server over HTTP on a port of its own (so it can be killed and
started again at the same address). Its `request` tool says how a call arrived: the JSON-RPC id
(the direct path's ids are `colonnade-direct-N`), the session header, and
whether a progress token came with it (the SDK's path always sends one). Failures (garbage, a hang
past the deadline, the server killed mid-call, a session the server no longer knows) end the same
way on both paths.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from colonnade.surfaces.mcp.render import RESULT_META_KEY
from tests.federation.conftest import Federation, run_gateway
from tests.support.loopback import free_port, start_process, stop_process, wait_http
from tests.support.mcp_servers import ROOT

pytestmark = pytest.mark.e2e

SCRIPT = ROOT / "tests" / "support" / "fault_server.py"


class Fault:
    """The fault server over HTTP at a fixed port: killed and started again at the same address."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.starts = 0
        self.process = self.start()

    def start(self) -> subprocess.Popen[bytes]:
        self.starts += 1
        log = self.tmp / f"fault-{self.starts}.log"
        process = start_process([sys.executable, str(SCRIPT), "--port", str(self.port)], log, cwd=ROOT)
        wait_http(self.url, process, log=log)
        return process

    def restart(self) -> None:
        stop_process(self.process)
        self.process = self.start()


@pytest.fixture(scope="module")
def fault(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fault]:
    made = Fault(tmp_path_factory.mktemp("twin-fault"))
    try:
        yield made
    finally:
        stop_process(made.process)


@pytest.fixture(scope="module")
def federation(fault: Fault, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Federation]:
    fault_entry = {"name": "fault", "transport": "http", "url": fault.url}
    servers = [{**fault_entry, "call_timeout_s": 2}]
    with run_gateway(tmp_path_factory.mktemp("twin") / "gateway", servers) as gateway:
        yield gateway


def arrival(result: types.CallToolResult) -> dict[str, Any]:
    assert result.is_error is not True, result.content
    return dict(result.structured_content or {})


async def reach(client: Client) -> None:
    """Call until a call goes through (the twin session coming up again), within 15 s."""
    with anyio.fail_after(15):
        while True:
            try:
                if not (await client.call_tool("request", {})).is_error:
                    return
            except MCPError:
                pass  # the server's 404 for a session it forgot, until the new one is up
            await anyio.sleep(0.2)


def direct_arrival(result: types.CallToolResult) -> bool:
    return direct(arrival(result))


def direct(arrived: dict[str, Any]) -> bool:
    """Whether the call came by the direct path (the SDK numbers its requests, or names a resumable
    one `colonnade-resumable-N`)."""
    return str(arrived["id"]).startswith("colonnade-direct-")


async def _ignore_progress(progress: float, total: float | None, message: str | None) -> None:
    return None


async def test_quiet_calls_go_directly_in_the_twin_session_and_the_others_through_the_sdk(
    federation: Federation,
) -> None:
    async with Client(federation.server("fault"), mode="legacy") as client:
        # The first call opens the twin session: until it is up, the endpoint keeps the request's
        # stream (the caller can be asked), so that call takes the SDK's path.
        await client.call_tool("request", {})
        quiet = arrival(await client.call_tool("request", {}))
        again = arrival(await client.call_tool("request", {}))
        followed = arrival(await client.call_tool("request", {}, progress_callback=_ignore_progress))
    assert direct(quiet) and quiet["progress"] is False
    assert again["id"] != quiet["id"]
    assert not direct(followed) and followed["progress"] is True  # the SDK's own request
    assert quiet["session"] is not None and quiet["session"] == followed["session"]  # one twin session

    async with Client(federation.server("fault"), mode="legacy", elicitation_callback=_no_answer) as asked:
        askable = arrival(await asked.call_tool("request", {}))
    assert not direct(askable)  # a caller who can be asked keeps the SDK's path
    assert askable["session"] == quiet["session"]

    async with Client(federation.server("fault")) as modern:
        stateless = arrival(await modern.call_tool("request", {}))
    assert stateless["session"] is None and stateless["progress"] is False  # 2026-07-28: no session


async def _no_answer(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="decline")


async def both_paths(federation: Federation, tool: str) -> list[types.CallToolResult | MCPError]:
    """The same call on the direct path and on the SDK's (a progress token keeps it there)."""
    outcomes: list[types.CallToolResult | MCPError] = []
    async with Client(federation.server("fault"), mode="legacy") as client:
        for progress in (None, _ignore_progress):
            try:
                outcomes.append(await client.call_tool(tool, {}, progress_callback=progress))
            except MCPError as exc:
                outcomes.append(exc)
    return outcomes


async def test_garbage_ends_the_same_on_both_paths(federation: Federation) -> None:
    """A body that is not JSON is no error of the server's: a typed result on both paths."""
    direct, sdk = await both_paths(federation, "garbage")
    assert isinstance(direct, types.CallToolResult) and isinstance(sdk, types.CallToolResult)
    codes = [dict((r.meta or {})[RESULT_META_KEY])["error"]["code"] for r in (direct, sdk)]
    assert codes == ["D-DATA-MALFORMED"] * 2 and direct.is_error and sdk.is_error


async def test_a_question_on_the_call_stream_is_answered_by_the_session(federation: Federation) -> None:
    """The server asks for roots on the direct call's own stream. The question goes to the SDK's
    session, as its transport would hand it on: nobody in flight can be asked (the caller's request
    is answered with one JSON body), so the session's refusal goes back to the server, which answers
    the call with it (unanswered, the call would have met its deadline)."""
    async with Client(federation.server("fault"), mode="legacy") as client:
        await client.call_tool("request", {})  # the twin session is up
        result = await client.call_tool("roots", {})
    # the refusal's text is the proof (an unanswered question would end the call at its deadline instead)
    assert result.content[0].text.startswith("refused: no caller can answer roots/list")  # type: ignore[union-attr]


async def test_a_hang_meets_the_deadline_and_the_server_hears_of_it(federation: Federation) -> None:
    async with Client(federation.server("fault"), mode="legacy") as client:
        before = arrival(await client.call_tool("cancelled", {}))["cancelled"]
        started = time.monotonic()
        result = await client.call_tool("hang", {})
        assert time.monotonic() - started < 12  # the 2 s call deadline, not the hang (a busy machine)
        meta = dict((result.meta or {}).get("colonnade/result") or {})
        assert result.is_error is True and meta["error"]["details"]["cause"] == "R-TIMEOUT-001", meta
        for _ in range(50):  # the cancellation is a notification: it lands soon after
            if arrival(await client.call_tool("cancelled", {}))["cancelled"] == before + 1:
                break
            await anyio.sleep(0.1)
        else:
            raise AssertionError("the server never heard that the call was abandoned")


async def test_a_server_killed_mid_call_fails_the_call_fast_and_comes_back(
    federation: Federation, fault: Fault
) -> None:
    async with Client(federation.server("fault"), mode="legacy") as client:
        arrival(await client.call_tool("request", {}))
        outcome: dict[str, types.CallToolResult] = {}
        async with anyio.create_task_group() as group:

            async def slow() -> None:
                outcome["slow"] = await client.call_tool("sleep", {"seconds": 10})

            group.start_soon(slow)
            await anyio.sleep(0.5)
            started = time.monotonic()
            os.kill(fault.process.pid, signal.SIGKILL)
        assert time.monotonic() - started < 6  # the cut ends the call, not its 10 s sleep
        meta = dict((outcome["slow"].meta or {}).get("colonnade/result") or {})
        assert outcome["slow"].is_error is True and meta["error"]["details"]["cause"] == "R-UPSTREAM-CONNECT"
        fault.process = fault.start()
        # The server that came back does not know the twin's session: the first call to reach it
        # hears 404 and fails, and the twin opens a new session (the spec's MUST for a client).
        await reach(client)
        result = await client.call_tool("request", {})
        assert direct(arrival(result))


@pytest.mark.parametrize("path", ["direct", "sdk"])
async def test_a_session_the_server_forgot_is_refused_then_opened_again(
    federation: Federation, fault: Fault, path: str
) -> None:
    """The server restarted at the same address no longer knows the twin's session: a call that
    meets it fails with the server's 404 error on either path, and the twin opens a new session
    (a client MUST, says the spec), so the next calls go through."""
    progress = _ignore_progress if path == "sdk" else None
    async with Client(federation.server("fault"), mode="legacy") as client:
        await reach(client)
        assert direct_arrival(await client.call_tool("request", {}))  # the twin session is up
        fault.restart()
        try:
            result = await client.call_tool("request", {}, progress_callback=progress)
        except MCPError as exc:
            assert (exc.error.code, exc.error.message) == (types.INVALID_REQUEST, "Session not found")
        else:
            # The twin may have heard the 404 first, on its SDK client's GET stream reconnecting: the
            # call then went through on the new session, or was cut when the old one closed.
            error = dict((result.meta or {}).get("colonnade/result") or {}).get("error") or {}
            assert result.is_error is not True or error["details"]["cause"] == "R-UPSTREAM-CONNECT", error
        await reach(client)
