"""Servers added, restarted and removed while the gateway runs: REST `/v1/servers`, the CLI, `/v1/status`."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from typer.testing import CliRunner

from colonnade.cli import app
from tests.federation.conftest import Federation, run_gateway
from tests.support.mcp_servers import BIN, fault_stdio, venv_stdio

pytestmark = pytest.mark.e2e
runner = CliRunner()


@pytest.fixture(scope="module")
def admin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Federation]:
    servers = [venv_stdio("time", "mcp-server-time")]
    with run_gateway(tmp_path_factory.mktemp("admin"), servers, server={"admin_api": True}) as gateway:
        yield gateway


@pytest.fixture(scope="module")
def locked(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Federation]:
    with run_gateway(tmp_path_factory.mktemp("locked"), [venv_stdio("time", "mcp-server-time")]) as gateway:
        yield gateway


def cli(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args), env={"COLUMNS": "250"})
    return result.exit_code, result.output


async def test_a_server_added_over_rest_is_served_then_removed(admin: Federation) -> None:
    added = httpx2.post(f"{admin.base}/v1/servers", json=fault_stdio("fault"), timeout=30)
    assert added.status_code == 201, added.text
    assert added.json()["name"] == "fault"
    admin.wait_ready("fault")
    async with Client(admin.mcp) as client:
        echo = await client.call_tool("default__fault__echo", {})
    assert echo.is_error is False
    async with Client(admin.server("fault")) as client:
        assert {t.name for t in (await client.list_tools()).tools} >= {"echo", "pid"}

    again = httpx2.post(f"{admin.base}/v1/servers", json=fault_stdio("fault"), timeout=30)
    assert again.status_code == 409 and again.json()["error"]["code"] == "I-REQ-SERVER-EXISTS"

    removed = httpx2.delete(f"{admin.base}/v1/servers/fault", timeout=30)
    assert removed.json() == {"removed": "fault"}
    assert (
        httpx2.get(f"{admin.base}/v1/servers/fault", timeout=10).json()["error"]["code"]
        == "I-REQ-UNKNOWN-SERVER"
    )
    async with Client(admin.mcp) as client:
        names = {t.name for t in (await client.list_tools()).tools}
    assert not any(name.startswith("default__fault__") for name in names)
    assert httpx2.post(admin.server("fault"), json={}, timeout=10).status_code == 404


def test_an_invalid_definition_lists_every_problem(admin: Federation) -> None:
    answer = httpx2.post(f"{admin.base}/v1/servers", json={"name": "x y", "transport": "stdio"}, timeout=10)
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["code"] == "I-REQ-SERVER-CONFIG" and len(error["details"]["problems"]) >= 1
    assert any(p.startswith("name") for p in error["details"]["problems"])


def test_a_misspelt_key_in_a_definition_gets_the_config_files_suggestion(admin: Federation) -> None:
    definition = {"name": "t", "transport": "stdio", "comand": "mcp-server-time", "allow_tool": ["x"]}
    definition["tools"] = {"x": {"requires_human_aproval": True}}
    answer = httpx2.post(f"{admin.base}/v1/servers", json=definition, timeout=10)
    assert answer.status_code == 400
    problems = answer.json()["error"]["details"]["problems"]
    for typo, meant in [
        ("comand", "command"),
        ("allow_tool", "allow_tools"),
        ("tools.x.requires_human_aproval", "requires_human_approval"),
    ]:
        hint = f"did you mean {meant!r}? check the spelling; see docs/servers.md"
        expected = f"{typo}: unknown setting ({hint})"
        assert expected in problems, problems
    json_type = {"content-type": "application/json"}
    broken = httpx2.post(f"{admin.base}/v1/servers", content=b"{not json", headers=json_type, timeout=10)
    assert broken.json()["error"]["details"]["problems"][0].startswith("(body): Invalid JSON"), broken.text


def test_restart_gives_a_stdio_server_a_new_process(admin: Federation) -> None:
    before = admin.server_status("time")
    code, output = cli("servers", "restart", "time", "--url", admin.base)
    assert code == 0 and "restarting time" in output
    deadline = time.monotonic() + 30
    while (after := admin.server_status("time"))["restarts"] == before["restarts"]:
        assert time.monotonic() < deadline, after
        time.sleep(0.1)
    admin.wait_ready("time")
    after = admin.server_status("time")
    assert after["restarts"] == before["restarts"] + 1 and after["since"] > before["since"]


def test_the_cli_lists_servers_and_the_gateways_status(admin: Federation) -> None:
    code, output = cli("servers", "list", "--url", admin.base)
    assert code == 0 and "time" in output and "ready" in output
    code, output = cli("servers", "status", "time", "--url", admin.base, "--json")
    detail = json.loads(output)
    assert code == 0 and detail["config"]["command"] == str(BIN / "mcp-server-time")
    code, output = cli("status", "--url", admin.base, "--json")
    status = json.loads(output)
    assert code == 0 and status["tools"] >= 2 and status["servers"][0]["name"] == "time"
    assert {"enabled", "tools_with_learned_co_occurrence"} <= set(status["routing"])
    code, output = cli("status", "--url", admin.base)
    assert code == 0 and "Colonnade" in output and "time" in output


def test_the_cli_search_ranks_a_federated_servers_tools(admin: Federation) -> None:
    """`tools search` asks the running gateway, so a downstream server's tools are ranked too."""
    code, output = cli("tools", "search", "convert a time to another timezone", "--url", admin.base, "--json")
    assert code == 0, output
    ranking = json.loads(output)
    assert ranking["ranked_by"].startswith(f"the gateway at {admin.base}")
    top = ranking["tools"][0]
    assert top["canonical_name"].endswith(":convert_time") and top["wire_name"].endswith("convert_time")


def test_the_cli_adds_and_removes_a_server(admin: Federation, tmp_path: Path) -> None:
    code, output = cli(
        "servers", "add", "clock", "--command", str(BIN / "mcp-server-time"), "--url", admin.base
    )
    assert code == 0 and "added clock (stdio)" in output
    admin.wait_ready("clock")
    assert admin.server_status("clock")["tools"] == 2
    code, output = cli("servers", "remove", "clock", "--url", admin.base)
    assert code == 0 and "removed clock" in output
    code, output = cli("servers", "remove", "clock", "--url", admin.base)
    assert code == 1 and "I-REQ-UNKNOWN-SERVER" in output


def test_administration_is_refused_unless_turned_on(locked: Federation) -> None:
    for answer in (
        httpx2.post(f"{locked.base}/v1/servers", json=fault_stdio("fault"), timeout=10),
        httpx2.post(f"{locked.base}/v1/servers/time/restart", timeout=10),
        httpx2.delete(f"{locked.base}/v1/servers/time", timeout=10),
    ):
        assert answer.status_code == 403 and answer.json()["error"]["code"] == "A-AUTH-ADMIN"
    code, output = cli("servers", "restart", "time", "--url", locked.base)
    assert code == 1 and "A-AUTH-ADMIN" in output and "admin_api" in output
    assert locked.server_status("time")["restarts"] == 0
    code, output = cli("status", "--url", "http://127.0.0.1:9")
    assert code == 2 and "cannot reach the gateway" in output


def test_a_stdio_command_that_does_not_exist_is_refused(admin: Federation, tmp_path: Path) -> None:
    """Refused when added (it could never start), over REST and the CLI; nothing is added."""
    missing = {"name": "ghost", "transport": "stdio", "command": "colonnade-no-such-server"}
    answer = httpx2.post(f"{admin.base}/v1/servers", json=missing, timeout=10)
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["code"] == "I-REQ-SERVER-CONFIG" and "is not on the gateway's PATH" in error["message"]
    (tmp_path / "plain.txt").write_text("not a program")
    for command in (str(tmp_path / "nowhere" / "server"), str(tmp_path / "plain.txt")):
        answer = httpx2.post(f"{admin.base}/v1/servers", json={**missing, "command": command}, timeout=10)
        assert answer.status_code == 400 and command in answer.json()["error"]["message"], answer.text
    code, output = cli("servers", "add", "ghost", "--command", missing["command"], "--url", admin.base)
    assert code == 1 and "is not on the gateway's PATH" in " ".join(output.split()), output
    assert httpx2.get(f"{admin.base}/v1/servers/ghost", timeout=10).status_code == 404


def test_settings_that_name_no_tool_of_the_server_are_reported(admin: Federation) -> None:
    """A typo in `tools:` would leave a risky tool ungated, in `allow_tools` unserved: never silently."""
    definition = venv_stdio(
        "typos",
        "mcp-server-time",
        tools={"convert_tim": {"requires_human_approval": True}},
        allow_tools=["get_curent_time", "convert_*"],
        deny_tools=["nothing_*"],
    )
    added = httpx2.post(f"{admin.base}/v1/servers", json=definition, timeout=30)
    assert added.status_code == 201, added.text
    try:
        admin.wait_ready("typos")
        warnings = httpx2.get(f"{admin.base}/v1/servers/typos", timeout=10).json()["warnings"]
        assert warnings == [
            "tools.convert_tim names no tool of the server; did you mean 'convert_time'?",
            "allow_tools: 'get_curent_time' matches no tool of the server; did you mean 'get_current_time'?",
            "deny_tools: 'nothing_*' matches no tool of the server"
            " (its tools: get_current_time, convert_time)",
        ]
        assert "tools.convert_tim names no tool of the server" in admin.log.read_text()
        code, out = cli("servers", "status", "typos", "--url", admin.base)
        assert code == 0 and "did you mean 'convert_time'?" in out, out
        code, listed = cli("servers", "list", "--url", admin.base)
        assert code == 0 and (
            "warning: server typos: tools.convert_tim names no tool of the server; did you mean" in listed
        ), listed
        assert httpx2.get(f"{admin.base}/v1/servers/time", timeout=10).json()["warnings"] == []
    finally:
        httpx2.delete(f"{admin.base}/v1/servers/typos", timeout=30)
