"""`/servers/{name}/mcp` of a server that cannot take requests says why, with the code `/mcp` gives.

Real MCP clients of both protocol eras talk to one in-process gateway. A stdio server whose command
is not on the PATH is held `misconfigured`: its endpoint's `tools/list` is a JSON-RPC error whose
data carries `S-TOOL-CONFIG` and its fix, and a call of one of its tools is a typed `S-TOOL-CONFIG`
result (not "unknown tool": its tools were never listed). A pinned server whose command changed on
disk is held `unadmitted`: its listing says `S-TOOL-COMMAND-UNADMITTED`, and its tool calls get the
same code on its endpoint as on `/mcp`. A server that crashed and waits for its restart says
`S-TOOL-UNAVAILABLE` on both.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from colonnade.calls.call_errors import spec_for
from colonnade.surfaces.mcp.render import RESULT_META_KEY
from tests.support.machine_load import patient
from tests.support.mcp_servers import ROOT
from tests.surfaces.rest_harness import RunningGateway, gateway_settings, serve_gateway

pytestmark = pytest.mark.e2e

HOSTILE = ROOT / "tests" / "support" / "hostile_server.py"
MODES = ("auto", "legacy")


def script(path: Path, spawns: Path, note: str = "") -> None:
    path.write_text(f'#!/bin/sh\n{note}\necho $$ >> "{spawns}"\nexec "{sys.executable}" "{HOSTILE}"\n')
    path.chmod(0o755)


def last_spawned(spawns: Path) -> int:
    return int(spawns.read_text().split()[-1])


def until(check: Callable[[], bool], what: str, running: RunningGateway) -> None:
    deadline = time.monotonic() + patient(30)
    while not check():
        assert time.monotonic() < deadline, f"{what}: {running.gateway.servers.status()}"
        time.sleep(0.05)


def in_state(running: RunningGateway, name: str, wanted: str) -> bool:
    return next(s for s in running.gateway.servers.status() if s["name"] == name)["state"] == wanted


def base(running: RunningGateway) -> str:
    return str(running.client.base_url).rstrip("/")


async def listing_error(url: str, mode: str) -> dict[str, Any]:
    """The JSON-RPC error of the endpoint's `tools/list` (the test fails if it lists)."""
    async with Client(url, mode=mode) as client:  # type: ignore[arg-type]
        with pytest.raises(MCPError) as raised:
            await client.list_tools(cache_mode="bypass")
    error = raised.value.error
    assert error.code == types.INTERNAL_ERROR and isinstance(error.data, dict), error
    return {"message": error.message, **error.data}


async def call_code(url: str, tool: str, mode: str) -> tuple[str, str]:
    """(code, text) of a typed tool result."""
    async with Client(url, mode=mode) as client:  # type: ignore[arg-type]
        result = await client.call_tool(tool, {"x": 1})
    assert result.is_error is True, result
    error = dict((result.meta or {})[RESULT_META_KEY])["error"]
    text = result.content[0].text  # type: ignore[union-attr]
    assert text.startswith(f"{error['code']}: ") and f"fix: {spec_for(error['code']).fix}" in text
    return str(error["code"]), text


def gateway(tmp_path: Path, *servers: dict[str, Any]) -> Any:
    entries = [{"transport": "stdio", "restart_backoff_s": 0.1, **server} for server in servers]
    return serve_gateway(gateway_settings(tmp_path / "data", [], servers=entries))


@pytest.mark.parametrize("mode", MODES)
async def test_a_misconfigured_server_says_s_tool_config_with_its_fix(tmp_path: Path, mode: str) -> None:
    with gateway(tmp_path, {"name": "typo", "command": "hostile-servr"}) as running:
        until(lambda: in_state(running, "typo", "misconfigured"), "held misconfigured", running)
        url = f"{base(running)}/servers/typo/mcp"
        error = await listing_error(url, mode)
        assert error["code"] == "S-TOOL-CONFIG" and error["server"] == "typo"
        assert error["fix"] == spec_for("S-TOOL-CONFIG").fix
        assert "'hostile-servr'" in error["message"] and "not on the gateway's PATH" in error["message"]
        code, text = await call_code(url, "echo", mode)
        assert code == "S-TOOL-CONFIG" and "tool 'echo' cannot be called" in text and "PATH" in text


@pytest.mark.parametrize("mode", MODES)
async def test_an_unadmitted_command_says_so_on_both_endpoints(tmp_path: Path, mode: str) -> None:
    command, spawns = tmp_path / "server.sh", tmp_path / "spawns"
    script(command, spawns)
    pinned = {"name": "pinned", "command": os.fspath(command), "pin_command": {}}
    with gateway(tmp_path, pinned) as running:
        until(lambda: in_state(running, "pinned", "ready"), "started", running)
        script(command, spawns, note="# changed on disk")
        os.kill(last_spawned(spawns), signal.SIGKILL)
        until(lambda: in_state(running, "pinned", "unadmitted"), "held unadmitted", running)
        url = f"{base(running)}/servers/pinned/mcp"
        error = await listing_error(url, mode)
        assert error["code"] == "S-TOOL-COMMAND-UNADMITTED"
        assert error["fix"] == spec_for("S-TOOL-COMMAND-UNADMITTED").fix
        assert f"{command} changed" in error["message"]
        own, _ = await call_code(url, "echo", mode)
        aggregate, _ = await call_code(f"{base(running)}/mcp", "default__pinned__echo", mode)
        assert own == aggregate == "S-TOOL-COMMAND-UNADMITTED"


@pytest.mark.parametrize("mode", MODES)
async def test_a_crashed_server_waiting_for_its_restart_is_unavailable(tmp_path: Path, mode: str) -> None:
    command, spawns = tmp_path / "server.sh", tmp_path / "spawns"
    script(command, spawns)
    crashing = {"name": "crashed", "command": os.fspath(command), "restart_backoff_s": 60}
    with gateway(tmp_path, crashing) as running:
        until(lambda: in_state(running, "crashed", "ready"), "started", running)
        os.kill(last_spawned(spawns), signal.SIGKILL)
        until(lambda: in_state(running, "crashed", "down"), "down, restarting in a minute", running)
        url = f"{base(running)}/servers/crashed/mcp"
        error = await listing_error(url, mode)
        assert error["code"] == "S-TOOL-UNAVAILABLE" and "restarting" in error["message"], error
        assert error["fix"] == spec_for("S-TOOL-UNAVAILABLE").fix
        own, _ = await call_code(url, "echo", mode)
        aggregate, _ = await call_code(f"{base(running)}/mcp", "default__crashed__echo", mode)
        assert own == aggregate == "S-TOOL-UNAVAILABLE"
