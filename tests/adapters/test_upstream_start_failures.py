"""A stdio server's start failures: a configuration error holds it down, a crash keeps the backoff.

The server is the hostile test server started by a real shell script that counts its spawns in a
file: a crash after start is restarted (the count grows), a command that is gone holds the server
`misconfigured` after one attempt (the count stops, no restart is scheduled), its calls get
`S-TOOL-CONFIG` at once, and a restart after the fix brings it back.
"""

from __future__ import annotations

import asyncio
import os
import signal
import stat
import sys
import time
from pathlib import Path

import pytest

from colonnade.adapters.mcp.upstream import Upstream, UpstreamState
from colonnade.config import McpServerSettings
from colonnade.mcp_relay.answer import UpstreamDown, UpstreamHeld
from colonnade.mcp_relay.relay import Relay
from tests.support.machine_load import patient
from tests.support.mcp_servers import ROOT

pytestmark = pytest.mark.integration

HOSTILE = ROOT / "tests" / "support" / "hostile_server.py"


def counting_script(path: Path, spawns: Path) -> None:
    path.write_text(f'#!/bin/sh\necho $$ >> "{spawns}"\nexec "{sys.executable}" "{HOSTILE}"\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def spawned(spawns: Path) -> list[int]:
    return [int(line) for line in spawns.read_text().split()] if spawns.exists() else []


async def until(what: str, check: object, wait_s: float | None = None) -> None:
    deadline = time.monotonic() + (wait_s or patient(30))
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"not {what} in time"
        await asyncio.sleep(0.05)


def server(command: Path, **extra: object) -> McpServerSettings:
    return McpServerSettings.model_validate(
        {
            "name": "counted",
            "transport": "stdio",
            "command": os.fspath(command),
            "restart_backoff_s": 0.1,
            "restart_backoff_max_s": 0.2,
            **extra,
        }
    )


async def test_a_crash_is_restarted_but_a_missing_command_holds_it_until_fixed(tmp_path: Path) -> None:
    command, spawns = tmp_path / "server.sh", tmp_path / "spawns"
    counting_script(command, spawns)
    upstream = Upstream(server(command))
    upstream.start()
    try:
        await until("ready", lambda: upstream.state is UpstreamState.READY)
        assert len(upstream.tools) == 9

        os.kill(spawned(spawns)[-1], signal.SIGKILL)  # a crash after start: transient, restarted
        await until("restarted", lambda: len(spawned(spawns)) == 2 and upstream.state is UpstreamState.READY)

        hidden = command.rename(tmp_path / "moved.sh")  # the command is gone: a configuration error
        os.kill(spawned(spawns)[-1], signal.SIGKILL)
        await until("misconfigured", lambda: upstream.state is UpstreamState.MISCONFIGURED)
        restarts = upstream.status().restarts
        status = upstream.status().to_json()
        assert status["state"] == "misconfigured" and status["healthy"] is False
        assert f"the command {os.fspath(command)!r} of stdio server 'counted' does not exist" in (
            status["last_error"] or ""
        ), status

        started = time.monotonic()
        with pytest.raises(UpstreamHeld) as held:
            await upstream.call_tool("echo", {}, relay=Relay(), timeout_s=20)
        assert time.monotonic() - started < 5  # at once, not after the call's 20 s
        assert held.value.code == "S-TOOL-CONFIG"
        assert "misconfigured" in str(held.value) and "does not exist" in str(held.value)

        await asyncio.sleep(20 * upstream.settings.restart_backoff_max_s)  # ten backoffs' worth of time
        assert len(spawned(spawns)) == 2, "a misconfigured server must not be spawned again"
        assert upstream.status().restarts == restarts and upstream.state is UpstreamState.MISCONFIGURED

        hidden.rename(command)  # fixed; a restart (REST, CLI) leaves the state
        upstream.restart()
        await until("ready again", lambda: upstream.state is UpstreamState.READY)
        assert len(spawned(spawns)) == 3
        assert (await upstream.call_tool("echo", {"x": 1}, relay=Relay(), timeout_s=20))["isError"] is False
    finally:
        await upstream.stop()


async def test_a_working_directory_that_is_not_there_holds_the_server_misconfigured(tmp_path: Path) -> None:
    command, spawns = tmp_path / "server.sh", tmp_path / "spawns"
    counting_script(command, spawns)
    upstream = Upstream(server(command, cwd=os.fspath(tmp_path / "absent")))
    upstream.start()
    try:
        await until("misconfigured", lambda: upstream.state is UpstreamState.MISCONFIGURED)
        assert "working directory" in (upstream.last_error or "") and "does not exist" in (
            upstream.last_error or ""
        )
        await asyncio.sleep(1.0)
        assert spawned(spawns) == [] and upstream.status().restarts == 0
    finally:
        await upstream.stop()


async def test_a_server_that_exits_at_start_is_transient_and_keeps_its_backoff(tmp_path: Path) -> None:
    command, spawns = tmp_path / "exits.sh", tmp_path / "spawns"
    command.write_text(f'#!/bin/sh\necho $$ >> "{spawns}"\necho "ERROR: no key" >&2\nexit 3\n')
    command.chmod(0o755)
    upstream = Upstream(server(command))
    upstream.start()
    try:
        await until("restarted twice", lambda: len(spawned(spawns)) >= 3)
        assert upstream.state in (UpstreamState.DOWN, UpstreamState.CONNECTING)
        with pytest.raises(UpstreamDown) as down:
            await upstream.call_tool("echo", {}, relay=Relay(), timeout_s=5)
        assert not isinstance(down.value, UpstreamHeld)
    finally:
        await upstream.stop()


async def test_a_sandbox_that_cannot_be_set_up_holds_the_server_misconfigured(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("the sandbox's separate user needs a root gateway")
    command, spawns = tmp_path / "server.sh", tmp_path / "spawns"
    counting_script(command, spawns)
    work = tmp_path / "work"  # exists here, but the sandbox's /tmp is its own: not visible inside
    work.mkdir()
    upstream = Upstream(server(command, cwd=os.fspath(work), sandbox={"enabled": True, "enforce": "warn"}))
    upstream.start()
    try:
        await until("misconfigured", lambda: upstream.state is UpstreamState.MISCONFIGURED)
        error = upstream.last_error or ""
        assert error.startswith("sandbox: ") and "working directory" in error and "not visible" in error, (
            error
        )
        assert upstream.violations == {"setup": 1}
        await asyncio.sleep(1.0)
        assert upstream.status().restarts == 0 and spawned(spawns) == []  # the command itself never ran
    finally:
        await upstream.stop()
