"""A misconfigured stdio server fixed while the gateway runs: `PUT /v1/servers/NAME` (and the CLI's
`servers update`) replaces its definition, and it leaves the `misconfigured` state and starts."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from colonnade.cli import app
from tests.support.machine_load import patient
from tests.support.mcp_servers import ROOT
from tests.surfaces.rest_harness import RunningGateway, gateway_settings, serve_gateway

pytestmark = pytest.mark.e2e

HOSTILE = str(ROOT / "tests" / "support" / "hostile_server.py")


def state(running: RunningGateway) -> dict[str, Any]:
    return next(s for s in running.gateway.servers.status() if s["name"] == "typo")


def until(running: RunningGateway, wanted: str) -> None:
    deadline = time.monotonic() + patient(30)
    while state(running)["state"] != wanted:
        assert time.monotonic() < deadline, state(running)
        time.sleep(0.05)


def test_a_replaced_definition_takes_a_misconfigured_server_out_of_its_state(tmp_path: Path) -> None:
    entry = {"name": "typo", "transport": "stdio", "command": "hostile-servr", "restart_backoff_s": 0.1}
    settings = gateway_settings(tmp_path / "data", [], servers=[entry])
    settings = settings.model_copy(update={"server": settings.server.model_copy(update={"admin_api": True})})
    with serve_gateway(settings) as running:
        until(running, "misconfigured")
        client = running.client
        elsewhere = client.put("/v1/servers/typo", json={**entry, "name": "other"})
        assert elsewhere.status_code == 400 and "it replaces 'typo'" in elsewhere.json()["error"]["message"]
        still_wrong = client.put("/v1/servers/typo", json={**entry, "command": "still-not-there"})
        assert still_wrong.status_code == 400 and "still-not-there" in still_wrong.json()["error"]["message"]
        unknown = client.put("/v1/servers/nobody", json={**entry, "name": "nobody"})
        assert unknown.status_code == 404
        assert state(running)["state"] == "misconfigured"

        fixed = {"transport": "stdio", "command": sys.executable, "args": [HOSTILE]}
        base = str(client.base_url).rstrip("/")
        env = {"COLUMNS": "200", "COLONNADE_DATA_DIR": str(tmp_path / "cli")}
        done = CliRunner().invoke(
            app, ["servers", "update", "typo", "--definition", json.dumps(fixed), "--url", base], env=env
        )
        assert done.exit_code == 0 and "updated typo (stdio)" in done.stdout, done.output
        until(running, "ready")
        answer = client.post("/v1/calls", json={"tool_id": "default:typo:echo", "input": {"x": 1}})
        assert answer.json()["status"] == "success", answer.text
        assert client.get("/v1/servers/typo").json()["config"]["command"] == sys.executable
