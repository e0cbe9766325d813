"""Pinned stdio commands (issue 33 item 3): a changed file on disk is refused until two people admit it.

The server's command is a real executable (a shell script that starts the hostile test server and
counts its spawns); it is pinned at its first start. The script is then changed on disk and the
process killed: the restart finds the change, parks it as `@command` (with a diff of the digests,
audited), holds the server `unadmitted` without spawning it, and its calls get
`S-TOOL-COMMAND-UNADMITTED` at once. One approval is not enough, the same person twice is refused,
the second person's approval starts the changed command. A configured `sha256` that the file does not
have, and an interpreter's script listed in `pin_command.files`, are refused the same way.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from colonnade.adapters.command_digest import file_sha256
from colonnade.cli import app
from colonnade.runtime.tool_admission import COMMAND_KEY
from tests.support.machine_load import patient
from tests.support.mcp_servers import ROOT
from tests.surfaces.rest_harness import RunningGateway, gateway_settings, serve_gateway

pytestmark = pytest.mark.e2e

HOSTILE = ROOT / "tests" / "support" / "hostile_server.py"


def script(path: Path, spawns: Path, note: str = "") -> None:
    path.write_text(f'#!/bin/sh\n{note}\necho $$ >> "{spawns}"\nexec "{sys.executable}" "{HOSTILE}"\n')
    path.chmod(0o755)


def spawned(spawns: Path) -> list[int]:
    return [int(line) for line in spawns.read_text().split()] if spawns.exists() else []


def until(check: Callable[[], bool], what: str, running: RunningGateway) -> None:
    deadline = time.monotonic() + patient(30)
    while not check():
        assert time.monotonic() < deadline, f"{what}: {running.gateway.servers.status()}"
        time.sleep(0.05)


def state(running: RunningGateway, name: str = "pinned") -> dict[str, Any]:
    return next(s for s in running.gateway.servers.status() if s["name"] == name)


def echo(running: RunningGateway, name: str = "pinned") -> dict[str, Any]:
    started = time.monotonic()
    answer = running.client.post("/v1/calls", json={"tool_id": f"default:{name}:echo", "input": {"x": 1}})
    assert answer.status_code == 200, answer.text
    assert time.monotonic() - started < patient(5)  # at once: no wait for a start that cannot come
    return dict(answer.json())


def gateway(tmp_path: Path, *servers: dict[str, Any]) -> Any:
    entries = [{"transport": "stdio", "restart_backoff_s": 0.1, **server} for server in servers]
    settings = gateway_settings(tmp_path / "data", [], servers=entries)
    settings = settings.model_copy(update={"server": settings.server.model_copy(update={"admin_api": True})})
    return serve_gateway(settings)


def cli(running: RunningGateway, tmp_path: Path, *args: str) -> Any:
    """`colonnade servers ...` against the running gateway (over REST)."""
    base = str(running.client.base_url).rstrip("/")
    env = {"COLUMNS": "250", "COLONNADE_DATA_DIR": str(tmp_path / "cli")}
    return CliRunner().invoke(app, ["servers", *args, "--url", base], env=env)


def test_a_changed_command_is_refused_until_two_people_admit_it(tmp_path: Path) -> None:
    command, spawns = tmp_path / "server.sh", tmp_path / "spawns"
    script(command, spawns)
    first = file_sha256(command)
    with gateway(tmp_path, {"name": "pinned", "command": os.fspath(command), "pin_command": {}}) as running:
        until(lambda: state(running)["state"] == "ready", "started", running)
        pins = running.gateway.servers.admission_of("pinned")
        assert pins["pinned"][COMMAND_KEY]["admitted_by"] == ["first-start"]
        assert echo(running)["status"] == "success"

        script(command, spawns, note="# changed on disk")  # the binary is replaced under the gateway
        os.kill(spawned(spawns)[-1], signal.SIGKILL)
        until(lambda: state(running)["state"] == "unadmitted", "held unadmitted", running)
        status = state(running)
        assert status["healthy"] is False
        assert (
            f"{command} changed" in status["last_error"]
            and f"admit pinned {COMMAND_KEY}" in status["last_error"]
        )
        refused = echo(running)
        assert refused["status"] == "terminal_error"
        assert refused["error"]["code"] == "S-TOOL-COMMAND-UNADMITTED", refused

        parked = running.gateway.servers.admission_of("pinned")["parked"]
        assert [p["tool"] for p in parked] == [COMMAND_KEY] and parked[0]["kind"] == "command"
        diff = parked[0]["diff"]
        assert f"-executable: {command} sha256:{first}" in diff
        assert f"+executable: {command} sha256:{file_sha256(command)}" in diff

        time.sleep(1.0)  # ten backoffs: nothing is spawned while it waits
        assert len(spawned(spawns)) == 1 and state(running)["state"] == "unadmitted"

        shown = cli(running, tmp_path, "diff", "pinned", COMMAND_KEY)
        assert shown.exit_code == 0 and f"+executable: {command} sha256:" in shown.stdout, shown.output
        assert cli(running, tmp_path, "admit", "pinned", COMMAND_KEY, "--as", "alice").exit_code == 0
        twice = cli(running, tmp_path, "admit", "pinned", COMMAND_KEY, "--as", "alice")
        assert twice.exit_code == 1 and "A-AUTH-ADMISSION-SELF" in twice.output
        assert state(running)["state"] == "unadmitted"
        done = cli(running, tmp_path, "admit", "pinned", COMMAND_KEY, "--as", "bob")
        assert done.exit_code == 0 and f"admitted pinned:{COMMAND_KEY}" in done.stdout, done.output
        until(lambda: state(running)["state"] == "ready", "started after the admission", running)
        assert len(spawned(spawns)) == 2
        assert echo(running)["status"] == "success"
        pinned = running.gateway.servers.admission_of("pinned")["pinned"][COMMAND_KEY]
        assert pinned["admitted_by"] == ["anonymous:alice", "anonymous:bob"]

        running.run(running.gateway.servers.admission.flushed())
        audit = running.gateway.governance.audit
        assert audit is not None
        records = [r for r in running.run(audit.store.scan()) if r.tool == f"default:pinned:{COMMAND_KEY}"]
        outcomes = [r.outcome for r in records]
        assert outcomes[:2] == ["admitted", "parked-command"], outcomes
        assert {"approved-1-of-2", "refused-self-approval", "admitted"} <= set(outcomes[2:]), outcomes


def test_a_configured_digest_and_a_listed_script_are_checked_at_start(tmp_path: Path) -> None:
    command, spawns = tmp_path / "server.sh", tmp_path / "spawns"
    script(command, spawns)
    served = tmp_path / "hostile_copy.py"
    served.write_bytes(HOSTILE.read_bytes())
    wrong = "0" * 64
    servers = [
        {"name": "pinned", "command": os.fspath(command), "pin_command": {"sha256": wrong}},
        {
            "name": "interpreted",
            "command": sys.executable,
            "args": [os.fspath(served)],
            "pin_command": {"files": [os.fspath(served)]},
        },
        {"name": "nofile", "command": sys.executable, "pin_command": {"files": ["absent.py"]}, "cwd": "/"},
    ]
    with gateway(tmp_path, *servers) as running:
        until(lambda: state(running)["state"] == "unadmitted", "refused against colonnade.yaml", running)
        assert spawned(spawns) == []
        parked = running.gateway.servers.admission_of("pinned")["parked"][0]
        assert (
            f"-executable: {command} sha256:{wrong}" in parked["diff"] and parked["admitted_digest"] is None
        )

        until(lambda: state(running, "interpreted")["state"] == "ready", "interpreted started", running)
        assert echo(running, "interpreted")["status"] == "success"
        files = running.gateway.servers.admission_of("interpreted")["pinned"][COMMAND_KEY]
        assert files["admitted_by"] == ["first-start"]
        with served.open("a") as changed:
            changed.write("\n# a script changed on disk\n")
        running.run(running.gateway.servers.restart("interpreted"))
        until(lambda: state(running, "interpreted")["state"] == "unadmitted", "the script's change", running)
        assert f"{served} changed" in state(running, "interpreted")["last_error"]

        until(lambda: state(running, "nofile")["state"] == "misconfigured", "a missing pinned file", running)
        assert "names 'absent.py', which is not a file (/absent.py)" in state(running, "nofile")["last_error"]
