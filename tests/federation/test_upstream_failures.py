"""Downstream servers that crash, hang or answer garbage: typed results, and the gateway carries on.

Behind one gateway: the fault server over stdio (killed mid-call, then restarted with a backoff;
a tool that hangs past the call deadline), the fault server over HTTP (a call answered with a body
that is not JSON), and PyPI `mcp-server-time`, which must stay healthy throughout; also a lazy
server, and servers whose credentials are secrets named in the configuration.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client

from colonnade.surfaces.mcp.render import RESULT_META_KEY
from tests.federation.conftest import Federation, run_gateway
from tests.support.loopback import free_port, stop_process
from tests.support.mcp_servers import fault_http, fault_stdio, venv_stdio

pytestmark = pytest.mark.e2e

# A server that cannot start, as many do without their credentials: it says why on stderr and exits.
_KEYLESS = "import sys; print('starting', file=sys.stderr); sys.exit('ERROR: FOO_API_KEY is not set')"


@pytest.fixture(scope="module")
def federation(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Federation]:
    tmp = tmp_path_factory.mktemp("failures")
    process: subprocess.Popen[bytes] | None = None
    try:
        process, url = fault_http(tmp / "fault-http.log")
        servers = [
            fault_stdio(
                "fault", call_timeout_s=2, restart_backoff_s=1.0, secret_env={"FAULT_TOKEN": "fault.token"}
            ),
            {"name": "broken", "transport": "http", "url": url, "auth": {"secret": "BROKEN_TOKEN"}},
            venv_stdio("time", "mcp-server-time"),
            venv_stdio("lazy", "mcp-server-time", start="lazy", idle_timeout_s=1),
            fault_stdio("unset", secret_env={"TOKEN": "never.set"}, restart_backoff_s=5),
            {"name": "nowhere", "transport": "http", "url": f"http://127.0.0.1:{free_port()}/mcp"},
            {"name": "keyless", "transport": "stdio", "command": sys.executable, "args": ["-c", _KEYLESS]},
            {"name": "misspelt", "transport": "stdio", "command": "mcp-server-tme", "restart_backoff_s": 5},
        ]
        secrets = {"COLONNADE_SECRET_FAULT_TOKEN": "s3cret", "COLONNADE_SECRET_BROKEN_TOKEN": "t0ken"}
        ready = ["fault", "broken", "time", "lazy"]
        with run_gateway(tmp / "gateway", servers, env=secrets, ready=ready) as gateway:
            yield gateway
    finally:
        if process is not None:
            stop_process(process)


def code_of(result: types.CallToolResult) -> str | None:
    error = dict((result.meta or {})[RESULT_META_KEY]).get("error")
    return error["code"] if error else None


def cause_of(result: types.CallToolResult) -> str | None:
    """What ended a write the server may have acted on (its code becomes "effect unknown")."""
    error = dict((result.meta or {})[RESULT_META_KEY]).get("error") or {}
    return error.get("details", {}).get("cause")


async def call(
    federation: Federation, tool: str, arguments: dict[str, Any] | None = None
) -> types.CallToolResult:
    async with Client(federation.mcp) as client:
        return await client.call_tool(tool, arguments or {})


async def the_time_is_served(federation: Federation) -> None:
    result = await call(federation, "default__time__get_current_time", {"timezone": "UTC"})
    assert result.is_error is False


async def test_a_server_killed_mid_call_fails_the_call_fast_and_comes_back(federation: Federation) -> None:
    pid = (await call(federation, "default__fault__pid")).structured_content["pid"]  # type: ignore[index]
    restarts = federation.server_status("fault")["restarts"]
    async with Client(federation.mcp) as client, anyio.create_task_group() as group:
        outcome: dict[str, types.CallToolResult] = {}

        async def slow() -> None:
            outcome["slow"] = await client.call_tool("default__fault__sleep", {"seconds": 10})

        group.start_soon(slow)
        await anyio.sleep(0.5)
        started = time.monotonic()
        os.kill(pid, signal.SIGKILL)
    assert time.monotonic() - started < 6  # the cut ends the call, not its 10 s sleep
    # an unkeyed tool that may have acted is never answered "retry": the cut is the cause
    assert code_of(outcome["slow"]) == "S-TOOL-EFFECT-UNKNOWN-NO-KEY"
    assert cause_of(outcome["slow"]) == "R-UPSTREAM-CONNECT"

    started = time.monotonic()
    meanwhile = await call(federation, "default__fault__echo")
    # refused, not waited out: under the 2 s call deadline even on a busy machine
    assert code_of(meanwhile) == "S-TOOL-UNAVAILABLE" and time.monotonic() - started < 2.0
    assert "restarting" in meanwhile.content[0].text  # type: ignore[union-attr]
    await the_time_is_served(federation)

    federation.wait_ready("fault", timeout=30)
    status = federation.server_status("fault")
    assert status["restarts"] > restarts and "connection" in (status["last_error"] or "")
    again = await call(federation, "default__fault__pid")
    assert again.is_error is False and again.structured_content["pid"] != pid  # type: ignore[index]


async def test_a_hanging_server_meets_the_call_deadline_and_hears_of_it(federation: Federation) -> None:
    cancelled = (await call(federation, "default__fault__cancelled")).structured_content["cancelled"]  # type: ignore[index]
    started = time.monotonic()
    result = await call(federation, "default__fault__hang")
    elapsed = time.monotonic() - started
    assert code_of(result) == "S-TOOL-EFFECT-UNKNOWN-NO-KEY" and cause_of(result) == "R-TIMEOUT-001"
    assert 1.5 < elapsed < 12  # the 2 s call deadline, not the hang (generous: a busy machine)
    await anyio.sleep(0.5)
    after = (await call(federation, "default__fault__cancelled")).structured_content["cancelled"]  # type: ignore[index]
    assert after == cancelled + 1  # the server was told the call is abandoned
    assert (await call(federation, "default__fault__echo")).is_error is False
    assert federation.server_status("fault")["state"] == "ready"
    await the_time_is_served(federation)


async def test_garbage_from_a_server_is_a_data_error(federation: Federation) -> None:
    result = await call(federation, "default__broken__garbage")
    assert code_of(result) == "D-DATA-MALFORMED"
    assert (await call(federation, "default__broken__echo")).is_error is False
    assert federation.server_status("broken")["state"] == "ready"
    await the_time_is_served(federation)


async def test_secrets_reach_a_server_by_name_and_a_missing_one_says_how_to_set_it(
    federation: Federation,
) -> None:
    env = await call(federation, "default__fault__env", {"name": "FAULT_TOKEN"})
    assert env.structured_content == {"value": "s3cret"}
    auth = await call(federation, "default__broken__authorization")
    assert auth.structured_content == {"value": "Bearer t0ken"}
    unset = federation.server_status("unset")
    assert unset["state"] in ("down", "connecting") and unset["tools"] == 0
    assert "COLONNADE_SECRET_NEVER_SET" in (unset["last_error"] or "")
    assert "s3cret" not in (federation.log.parents[0] / "colonnade.yaml").read_text()


async def test_a_lazy_server_connects_for_a_call_and_idles_after(federation: Federation) -> None:
    assert federation.server_status("lazy")["tools"] == 2
    result = await call(federation, "default__lazy__get_current_time", {"timezone": "UTC"})
    assert result.is_error is False
    deadline = time.monotonic() + 20
    while federation.server_status("lazy")["state"] != "idle":
        assert time.monotonic() < deadline, federation.server_status("lazy")
        await anyio.sleep(0.2)
    again = await call(federation, "default__lazy__get_current_time", {"timezone": "UTC"})
    assert again.is_error is False


async def test_an_unreachable_server_is_down_and_says_why(federation: Federation) -> None:
    status = federation.server_status("nowhere")
    assert status["state"] in ("down", "connecting") and status["healthy"] is False
    assert "ConnectError" in (status["last_error"] or "")
    # where it tried and what it met, in the words of the user's setup (not aiohttp's `ssl:default`)
    config = httpx2.get(f"{federation.base}/v1/servers/nowhere", timeout=10).json()["config"]
    assert f"cannot connect to {config['url']}: connection refused" in status["last_error"], status
    assert "ssl:default" not in status["last_error"]
    assert federation.status()["servers"][0]["name"] == "broken"  # the others are listed and served
    await the_time_is_served(federation)


def test_a_server_that_exits_at_start_says_why_in_its_status_and_the_log(federation: Federation) -> None:
    deadline = time.monotonic() + 30
    while not (federation.server_status("keyless")["last_error"] or "").count("FOO_API_KEY"):
        assert time.monotonic() < deadline, federation.server_status("keyless")
        time.sleep(0.2)
    status = federation.server_status("keyless")
    assert status["state"] in ("down", "connecting") and status["healthy"] is False
    error = status["last_error"]
    assert "exited" in error and "starting | ERROR: FOO_API_KEY is not set" in error, error
    assert "[server keyless] ERROR: FOO_API_KEY is not set" in federation.log.read_text()


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_an_unknown_tool_on_a_servers_endpoint_is_named_as_called_with_that_servers_tools(
    federation: Federation, mode: str
) -> None:
    async with Client(federation.server("time"), mode=mode) as client:
        typo = await client.call_tool("get_current_tme", {"timezone": "UTC"})
        elsewhere = await client.call_tool("echo", {})  # a tool of the server `fault`, not of `time`
    error = dict((typo.meta or {})[RESULT_META_KEY])["error"]
    assert error["code"] == "I-REQ-UNKNOWN-TOOL"
    meant = "did you mean 'get_current_time'?"
    assert error["message"] == f"no tool named 'get_current_tme' on server 'time'; {meant}"
    assert error["details"]["did_you_mean"] == ["get_current_time"]
    other = dict((elsewhere.meta or {})[RESULT_META_KEY])["error"]
    assert other["message"].startswith("no tool named 'echo' on server 'time'"), other
    assert "fault" not in other["message"] and "default" not in other["message"]


def test_a_configured_command_that_is_not_there_is_named_with_the_fix(federation: Federation) -> None:
    deadline = time.monotonic() + 30
    while federation.server_status("misspelt")["state"] != "misconfigured":  # held after one attempt
        assert time.monotonic() < deadline, federation.server_status("misspelt")
        time.sleep(0.2)
    status = federation.server_status("misspelt")
    assert status["healthy"] is False and status["restarts"] == 0, status
    banner = "  default/misspelt: MCP server misconfigured, not started: the command 'mcp-server-tme'"
    assert banner in federation.log.read_text()  # said at start, not after the banner's wait for servers
    said = "the command 'mcp-server-tme' of stdio server 'misspelt' is not on the gateway's PATH: install it"
    assert said in (status["last_error"] or ""), status
