"""A downstream stdio MCP server of tenant acme gets acme's stored secret in its environment
(`secret_env` naming `store:fault-token`), checked by asking the real server what it received; a
server of tenant globex naming the same secret is not started with it, and its status says how to
store one for globex."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from colonnade.cli import app as cli_app
from colonnade.config import VaultSettings
from tests.support.machine_load import patient
from tests.support.mcp_servers import fault_stdio
from tests.surfaces.rest_harness import RunningGateway, gateway_settings, serve_gateway

ACME_VALUE = "acme-server-token-2c9e4f"


def _status(running: RunningGateway, name: str) -> dict[str, Any]:
    servers = running.client.get("/v1/status").json()["servers"]
    found: dict[str, Any] = next(server for server in servers if server["name"] == name)
    return found


@pytest.fixture
def running(tmp_path: Path) -> Iterator[RunningGateway]:
    data_dir = tmp_path / "data"
    stored = CliRunner().invoke(
        cli_app,
        ["secrets", "set", "fault-token", "--tenant", "acme"],
        input=ACME_VALUE,
        env={"COLONNADE_DATA_DIR": str(data_dir)},
    )
    assert stored.exit_code == 0, stored.output
    reference = {"FAULT_TOKEN": "store:fault-token"}
    servers = [
        fault_stdio("fault", tenant="acme", secret_env=reference),
        fault_stdio("other", tenant="globex", secret_env=reference, restart_backoff_s=5),
    ]
    settings = gateway_settings(data_dir, [], servers=servers, vault=VaultSettings(cache_s=0))
    with serve_gateway(settings) as gateway:
        deadline = time.monotonic() + patient(90)
        while _status(gateway, "fault")["state"] not in ("ready", "idle"):
            assert time.monotonic() < deadline, _status(gateway, "fault")
            time.sleep(0.2)
        yield gateway


def test_a_server_gets_its_tenants_stored_secret_and_another_tenants_server_does_not(
    running: RunningGateway,
) -> None:
    response = running.client.post(
        "/v1/calls", json={"tool_id": "acme:fault:env", "input": {"name": "FAULT_TOKEN"}}
    )
    result = response.json()
    assert result["status"] == "success", result
    assert result["output"]["value"] == ACME_VALUE

    deadline = time.monotonic() + patient(30)
    while not _status(running, "other")["last_error"]:
        assert time.monotonic() < deadline, _status(running, "other")
        time.sleep(0.2)
    other = _status(running, "other")
    assert other["tools"] == 0
    assert "colonnade secrets set fault-token --tenant globex" in other["last_error"]
    assert ACME_VALUE not in str(running.client.get("/v1/status").json())
