"""Stdio servers confined by their sandbox, behind one real gateway (issue 33 items 1, 2).

A hostile server (tests/support/hostile_server.py) tries to allocate 2 GB, fork without end, spin
the CPU, read the gateway's data directory and /etc/shadow, reach a loopback port and show its
environment: each is refused or killed, each call gets a typed outcome within its deadline, and
`mcp-server-time`, confined as well, keeps answering in both protocol eras. With `network: allow` the
same server reaches the one loopback port of the host it is allowed (through the gateway's forwarder)
and no other, over IPv6 (`[::1]:PORT`) too where the host has an IPv6 loopback.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import Client

from colonnade.adapters.sandbox.confinement import host_abilities, ipv6_loopback
from colonnade.surfaces.mcp.render import RESULT_META_KEY
from tests.federation.conftest import Federation, run_gateway
from tests.support.loopback import free_port
from tests.support.mcp_servers import ROOT, venv_stdio

pytestmark = pytest.mark.e2e

PLANTED = "planted-" + secrets.token_hex(8)
DECLARED = "declared-" + secrets.token_hex(8)
_QUICK = {name: {"side_effects": "none"} for name in ("allocate", "fork_loop", "spin", "read", "listdir")}


def _confinable() -> str | None:
    host = host_abilities()
    if not host.root:
        return "the sandbox tests need a root gateway (a separate user, cgroups)"
    missing = {"memory", "pids", "cpu"} - set(host.cgroups.controllers)
    if missing:
        return f"this host offers no writable cgroup controllers {sorted(missing)}"
    return None


def hostile(**sandbox: Any) -> dict[str, Any]:
    return {
        "name": "hostile",
        "transport": "stdio",
        "command": sys.executable,
        "args": [str(ROOT / "tests" / "support" / "hostile_server.py")],
        "secret_env": {"DECLARED_TOKEN": "declared"},
        "call_timeout_s": 20,
        "restart_backoff_s": 0.2,
        "tools": _QUICK,
        "sandbox": {"enabled": True, "memory_mb": 128, "pids_max": 16, "cpu_time_s": 3, **sandbox},
    }


@pytest.fixture(scope="module")
def data_dir() -> Iterator[Path]:
    """Outside /tmp (which every sandbox replaces), world-readable: only the hiding keeps it out."""
    path = ROOT / f".sandbox-data-{secrets.token_hex(4)}"
    path.mkdir(mode=0o755)
    (path / "signing.jwk").write_text("the gateway's key\n")
    os.chmod(path / "signing.jwk", 0o644)
    yield path
    shutil.rmtree(path, ignore_errors=True)


class Shouter:
    """A TCP service on the host's loopback: answers each connection its bytes in capitals."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.listener = socket.create_server((host, 0), family=family)
        self.port = self.listener.getsockname()[1]
        self.served = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            with connection:
                data = b""
                while chunk := connection.recv(65536):
                    data += chunk
                connection.sendall(data.upper())
                self.served += 1


@pytest.fixture(scope="module")
def shouter() -> Iterator[Shouter]:
    service = Shouter()
    yield service
    service.listener.close()


@pytest.fixture(scope="module")
def shouter6() -> Iterator[Shouter | None]:
    """The same service on the host's IPv6 loopback; None where the host has none."""
    if not ipv6_loopback():
        yield None
        return
    service = Shouter("::1")
    yield service
    service.listener.close()


@pytest.fixture(scope="module")
def federation(
    tmp_path_factory: pytest.TempPathFactory, data_dir: Path, shouter: Shouter, shouter6: Shouter | None
) -> Iterator[Federation]:
    reason = _confinable()
    if reason is not None:
        pytest.skip(reason)
    sandbox = {"enabled": True}
    servers = [
        hostile(network="loopback"),
        {**hostile(network="allow", net_allowlist=[f"127.0.0.1:{shouter.port}"]), "name": "allowed"},
        *(
            [{**hostile(network="allow", net_allowlist=[f"[::1]:{shouter6.port}"]), "name": "allowed6"}]
            if shouter6 is not None
            else []
        ),
        venv_stdio("time", "mcp-server-time", sandbox=sandbox),
        venv_stdio("timelegacy", "mcp-server-time", protocol="legacy", sandbox=sandbox),
        venv_stdio(  # the organ sidecar, in the same sandbox as any stdio server (issue 33 item 4)
            "vault",
            "colonnade",
            *("organ", "serve", "examples.organs.vault", "-I", str(ROOT), "--data-dir", "/tmp/vault"),
            sandbox=sandbox,
        ),
        venv_stdio(
            "unenforceable",
            "mcp-server-time",
            sandbox={"enabled": True, "network": "allow", "net_allowlist": ["example.com:443"]},
        ),
    ]
    secrets_env = {"COLONNADE_SECRET_DECLARED": DECLARED, "PLANTED_API_KEY": PLANTED}
    tmp = tmp_path_factory.mktemp("sandbox")
    ready = ["hostile", "allowed", "time", "timelegacy", "vault", *(["allowed6"] if shouter6 else [])]
    with run_gateway(
        tmp / "gateway", servers, env=secrets_env, data_dir=str(data_dir), ready=ready
    ) as gateway:
        yield gateway


def code_of(result: types.CallToolResult) -> str | None:
    error = dict((result.meta or {})[RESULT_META_KEY]).get("error")
    return error["code"] if error else None


async def call(
    federation: Federation, tool: str, arguments: dict[str, Any] | None = None
) -> types.CallToolResult:
    async with Client(federation.mcp) as client:
        return await client.call_tool(tool, arguments or {})


async def answer(
    federation: Federation, tool: str, arguments: dict[str, Any] | None = None
) -> dict[str, Any]:
    result = await call(federation, f"default__hostile__{tool}", arguments)
    assert result.is_error is False, result
    return dict(result.structured_content or {})


async def the_time_is_served(federation: Federation) -> None:
    for server in ("time", "timelegacy"):
        result = await call(federation, f"default__{server}__get_current_time", {"timezone": "UTC"})
        assert result.is_error is False, result


async def test_it_runs_as_an_unprivileged_user_with_no_new_privileges(federation: Federation) -> None:
    who = await answer(federation, "whoami")
    assert who["uid"] != 0 and who["gid"] != 0
    assert who["no_new_privs"] == "1" and who["cwd"] == "/tmp"


async def test_its_environment_holds_only_what_was_declared(federation: Federation) -> None:
    environ = (await answer(federation, "environ"))["environ"]
    assert environ["DECLARED_TOKEN"] == DECLARED
    assert PLANTED not in str(environ) and not any(key.startswith("COLONNADE_") for key in environ)


async def test_it_never_sees_the_data_directory_or_the_shadow_file(
    federation: Federation, data_dir: Path
) -> None:
    assert os.listdir(data_dir)  # the gateway's own view
    assert (await answer(federation, "listdir", {"path": str(data_dir)}))["entries"] == []
    key = await answer(federation, "read", {"path": str(data_dir / "signing.jwk")})
    assert "FileNotFoundError" in key["error"]
    shadow = await answer(federation, "read", {"path": "/etc/shadow"})
    assert "PermissionError" in shadow["error"]
    assert (await answer(federation, "listdir", {"path": "/tmp"}))["entries"] == []  # its own /tmp


async def test_a_loopback_port_of_the_host_is_out_of_reach(federation: Federation) -> None:
    gateway_port = int(federation.base.rsplit(":", 1)[1])
    refused = await answer(federation, "connect", {"port": gateway_port})
    assert "ConnectionRefusedError" in refused["error"]


async def test_network_allow_reaches_the_allowed_host_port_and_no_other(
    federation: Federation, shouter: Shouter
) -> None:
    async def connect(port: int, **send: Any) -> dict[str, Any]:
        result = await call(federation, "default__allowed__connect", {"port": port, **send})
        assert result.is_error is False, result
        return dict(result.structured_content or {})

    served = shouter.served
    assert await connect(shouter.port, send="through the forwarder") == {
        "connected": True,
        "reply": "THROUGH THE FORWARDER",
    }
    assert shouter.served == served + 1  # the host's service answered, not something in the sandbox
    gateway_port = int(federation.base.rsplit(":", 1)[1])
    for port in (gateway_port, free_port()):
        assert "ConnectionRefusedError" in (await connect(port))["error"]
    status = federation.server_status("allowed")
    assert (
        status["sandbox"]["applied"]["network"]
        == f"its own loopback; forwarded to the host: 127.0.0.1:{shouter.port}"
    )
    hostile = await call(federation, "default__hostile__connect", {"port": shouter.port})  # network loopback
    assert "ConnectionRefusedError" in dict(hostile.structured_content or {})["error"]


async def test_network_allow_reaches_an_allowed_ipv6_loopback_port_and_no_other(
    federation: Federation, shouter: Shouter, shouter6: Shouter | None
) -> None:
    if shouter6 is None:
        pytest.skip("this host has no IPv6 loopback (::1 cannot be bound): nothing to forward over IPv6")

    async def connect(host: str, port: int, **send: Any) -> dict[str, Any]:
        arguments = {"host": host, "port": port, **send}
        result = await call(federation, "default__allowed6__connect", arguments)
        assert result.is_error is False, result
        return dict(result.structured_content or {})

    served = shouter6.served
    assert await connect("::1", shouter6.port, send="over ipv6") == {"connected": True, "reply": "OVER IPV6"}
    assert shouter6.served == served + 1  # the host's IPv6 service answered
    for host, port in (("127.0.0.1", shouter6.port), ("::1", shouter.port), ("::1", free_port())):
        assert "ConnectionRefusedError" in (await connect(host, port))["error"], (host, port)
    status = federation.server_status("allowed6")
    assert status["sandbox"]["applied"]["network"] == (
        f"its own loopback; forwarded to the host: [::1]:{shouter6.port}"
    )
    ipv4_only = await call(federation, "default__allowed__connect", {"host": "::1", "port": shouter6.port})
    assert "ConnectionRefusedError" in dict(ipv4_only.structured_content or {})["error"]


async def test_a_fork_loop_is_stopped_at_the_process_limit(federation: Federation) -> None:
    started = time.monotonic()
    forked = await answer(federation, "fork_loop", {"limit": 500})
    assert "Resource temporarily unavailable" in forked["error"]
    assert time.monotonic() - started < 20
    await the_time_is_served(federation)


async def test_allocating_2_gb_kills_it_with_a_typed_outcome_and_the_reason_shown(
    federation: Federation,
) -> None:
    started = time.monotonic()
    result = await call(federation, "default__hostile__allocate", {"mb": 2048})
    assert code_of(result) == "S-TOOL-SANDBOX-KILLED", result
    assert "memory limit of 128 MB" in result.content[0].text  # type: ignore[union-attr]
    assert time.monotonic() - started < 20  # the call's deadline
    await the_time_is_served(federation)
    status = federation.server_status("hostile")
    assert status["violations"].get("memory", 0) >= 1
    assert "memory limit of 128 MB" in (status["last_error"] or "")
    federation.wait_ready("hostile", timeout=30)  # restarted with its backoff
    metrics = httpx2.get(f"{federation.base}/metrics", timeout=10).text
    assert 'colonnade_sandbox_violations_total{kind="memory",server="hostile"}' in metrics


async def test_what_the_host_cannot_enforce_is_refused_with_the_fix(federation: Federation) -> None:
    status = federation.server_status("unenforceable")
    assert status["state"] == "misconfigured" and status["tools"] == 0 and status["restarts"] == 0
    assert "'example.com:443' cannot be enforced" in status["last_error"]
    assert "127.0.0.1:PORT" in status["last_error"] and "sandbox.enforce: warn" in status["last_error"]
    assert status["sandbox"]["missing"] and status["sandbox"]["applied"]["user"].startswith("nobody")


async def test_spinning_the_cpu_kills_it_at_its_cpu_time_limit(federation: Federation) -> None:
    federation.wait_ready("hostile", timeout=30)
    result = await call(federation, "default__hostile__spin", {"seconds": 60})
    assert code_of(result) == "S-TOOL-SANDBOX-KILLED", result
    assert "CPU time limit of 3 s" in result.content[0].text  # type: ignore[union-attr]
    assert federation.server_status("hostile")["violations"].get("cpu", 0) >= 1
    await the_time_is_served(federation)
    assert federation.status()["servers"]  # the gateway itself answers throughout


async def test_the_organ_sidecar_serves_its_organ_from_inside_the_sandbox(federation: Federation) -> None:
    stored = await call(federation, "default__vault__store", {"key": "notes/a.txt", "content": "boxed"})
    assert stored.is_error is False, stored
    read = await call(federation, "default__vault__retrieve", {"key": "notes/a.txt"})
    assert read.is_error is False and (read.structured_content or {})["content"] == "boxed", read
    status = federation.server_status("vault")
    assert status["sandbox"]["enabled"] and status["sandbox"]["missing"] == []
