"""The confinement a stdio server gets, as `plan()` decides it for a host, and `servers check` reports it."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from colonnade.adapters.sandbox.cgroups import CgroupHost
from colonnade.adapters.sandbox.confinement import HostAbilities, plan, summary
from colonnade.cli import app
from colonnade.config import McpServerSettings

CGROUPS = CgroupHost(
    1, {name: Path(f"/sys/fs/cgroup/{name}/colonnade") for name in ("memory", "pids", "cpu")}
)
ROOT_HOST = HostAbilities(root=True, cgroups=CGROUPS, user_namespaces=True)
ROOT_HOST_V6 = HostAbilities(root=True, cgroups=CGROUPS, user_namespaces=True, ipv6_loopback=True)
BARE_HOST = HostAbilities(root=False, cgroups=CgroupHost(None, {}), user_namespaces=True)


def server(**sandbox: Any) -> McpServerSettings:
    return McpServerSettings.model_validate(
        {
            "name": "s",
            "transport": "stdio",
            "command": sys.executable,
            "sandbox": {"enabled": True, **sandbox},
        }
    )


def test_a_root_host_with_cgroups_applies_every_default() -> None:
    confinement = plan(server(), hidden=(Path("/srv/data"),), host=ROOT_HOST)
    assert confinement.missing == [] and confinement.refusal() is None
    assert confinement.applied["user"].startswith("nobody (uid ")
    assert confinement.applied["memory"] == "512 MB (cgroup v1)"
    assert confinement.applied["processes"] == "64 (cgroup v1)"
    assert "network" in confinement.applied["namespaces"] and confinement.applied["network"] == "none"
    assert "/srv/data" in confinement.applied["hidden"]
    assert confinement.spec["uid"] != 0 and confinement.spec["rlimits"] == {"core": 0}


def test_without_cgroups_memory_falls_back_to_rlimits_and_the_cpu_share_is_missing() -> None:
    confinement = plan(server(), host=BARE_HOST)
    assert confinement.spec["rlimits"]["as"] == 512 * 1024 * 1024
    assert confinement.spec["user_namespace"] is True
    assert any("cpu_percent" in gap for gap in confinement.missing)
    refusal = confinement.refusal()
    assert refusal is not None and "sandbox.enforce: warn" in refusal


def test_warn_starts_what_strict_refuses() -> None:
    strict = plan(server(net_allowlist=["api.example.com:443"], network="host"), host=ROOT_HOST)
    assert strict.refusal() is not None and "net_allowlist" in strict.refusal()  # type: ignore[operator]
    warned = plan(
        server(net_allowlist=["api.example.com:443"], network="host", enforce="warn"), host=ROOT_HOST
    )
    assert warned.refusal() is None and warned.missing


def test_an_unknown_or_root_user_is_refused() -> None:
    assert "does not exist" in (plan(server(user="no-such-user-x"), host=ROOT_HOST).refusal() or "")
    assert "is root" in (plan(server(user="root"), host=ROOT_HOST).refusal() or "")


def test_a_disabled_sandbox_says_so() -> None:
    confinement = plan(server(enabled=False), host=ROOT_HOST)
    assert not confinement.enabled and confinement.refusal() is None
    assert summary(confinement).startswith("no sandbox")


def test_servers_check_reports_each_server_and_exits_1_on_a_refusal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    servers = [
        {"name": "boxed", "transport": "stdio", "command": sys.executable, "sandbox": {"enabled": True}},
        {
            "name": "leaky",
            "transport": "stdio",
            "command": sys.executable,
            "sandbox": {"enabled": True, "network": "host", "net_allowlist": ["example.com:443"]},
        },
    ]
    (tmp_path / "colonnade.yaml").write_text(
        yaml.safe_dump({"data_dir": str(tmp_path / "d"), "servers": servers})
    )
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["servers", "check", "--json"])
    assert result.exit_code == 1, result.output
    answer = json.loads(result.output)
    assert set(answer["servers"]) == {"boxed", "leaky"} and list(answer["refused"]) == ["leaky"]
    assert str((tmp_path / "d").resolve()) in answer["servers"]["boxed"]["applied"]["hidden"]
    text = CliRunner().invoke(app, ["servers", "check"])
    assert "refused:" in text.output and "net_allowlist" in text.output and "Traceback" not in text.output


def test_network_allow_forwards_only_loopback_ports_and_refuses_the_rest() -> None:
    allowed = plan(
        server(network="allow", net_allowlist=["127.0.0.1:8080", "localhost:5432"]), host=ROOT_HOST
    )
    assert allowed.missing == [] and allowed.spec["allow"] == [["127.0.0.1", 5432], ["127.0.0.1", 8080]]
    assert "network" in allowed.applied["namespaces"]
    assert (
        allowed.applied["network"]
        == "its own loopback; forwarded to the host: 127.0.0.1:5432, 127.0.0.1:8080"
    )
    remote = plan(
        server(network="allow", net_allowlist=["api.example.com:443", "127.0.0.1:1"]), host=ROOT_HOST
    )
    assert remote.spec["allow"] == [["127.0.0.1", 1]]
    refusal = remote.refusal()
    assert refusal is not None and "'api.example.com:443' cannot be enforced" in refusal
    assert "127.0.0.1:PORT, [::1]:PORT or localhost:PORT" in refusal
    assert plan(server(network="allow"), host=ROOT_HOST).refusal() is not None  # allows nothing: said
    elsewhere = plan(server(network="loopback", net_allowlist=["127.0.0.1:80"]), host=ROOT_HOST).refusal()
    assert elsewhere is not None and "applies only with `network: allow`" in elsewhere


def test_ipv6_loopback_is_forwarded_where_the_host_has_it_and_refused_where_not() -> None:
    entries = ["[::1]:8080", "::1:9090", "localhost:5432", "127.0.0.1:7070"]
    both = plan(server(network="allow", net_allowlist=entries), host=ROOT_HOST_V6)
    assert both.missing == []
    assert both.spec["allow"] == [
        ["127.0.0.1", 5432],
        ["127.0.0.1", 7070],
        ["::1", 5432],
        ["::1", 8080],
        ["::1", 9090],
    ]
    assert both.applied["network"] == (
        "its own loopback; forwarded to the host: 127.0.0.1:5432, 127.0.0.1:7070, [::1]:5432, [::1]:8080,"
        " [::1]:9090"
    )
    only_v4 = plan(server(network="allow", net_allowlist=entries), host=ROOT_HOST)
    assert only_v4.spec["allow"] == [["127.0.0.1", 5432], ["127.0.0.1", 7070]]  # localhost: its IPv4 half
    refusal = only_v4.refusal()
    assert (
        refusal is not None and "'[::1]:8080' cannot be enforced: this host has no IPv6 loopback" in refusal
    )
    assert "'::1:9090'" in refusal and "'localhost:5432'" not in refusal


def test_servers_check_says_whether_each_command_would_start_and_its_pin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "server.py"
    script.write_text("print('a server')\n")
    servers = [
        {"name": "plain", "transport": "stdio", "command": sys.executable},
        {"name": "misspelt", "transport": "stdio", "command": "no-such-server-x"},
        {
            "name": "pinned",
            "transport": "stdio",
            "command": sys.executable,
            "pin_command": {"files": [str(script)]},
        },
        {
            "name": "wrong",
            "transport": "stdio",
            "command": sys.executable,
            "pin_command": {"sha256": "0" * 64},
        },
    ]
    (tmp_path / "colonnade.yaml").write_text(
        yaml.safe_dump({"data_dir": str(tmp_path / "d"), "servers": servers})
    )
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["servers", "check", "--json"])
    assert result.exit_code == 1, result.output
    answer = json.loads(result.output)
    commands = {name: entry["command"] for name, entry in answer["servers"].items()}
    assert commands["plain"] == "found (not pinned)"
    assert commands["misspelt"].startswith("would be held misconfigured: the command 'no-such-server-x'")
    assert commands["pinned"] == "found, not pinned yet: pinned at its next start (admitted by first-start)"
    assert commands["wrong"].startswith("would be held unadmitted: the command of stdio server 'wrong'")
    assert set(answer["refused"]) == {"misspelt", "wrong"}
    assert not (tmp_path / "d" / "admission").exists()  # a preflight pins nothing
