"""`colonnade serve` and `colonnade demo` as real processes, as a new user meets them.

A busy port, an unreachable database and a stdio start with nothing to serve each end (or go on)
with one clear line on stderr, never a traceback; the demo follows the configured port and re-runs
over its own earlier state.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2
import pytest

from tests.support.loopback import free_port, start_process, wait_http
from tests.support.repo import ROOT

pytestmark = pytest.mark.e2e

COLONNADE = Path(sys.executable).with_name("colonnade")


def _env(tmp: Path, **settings: str) -> dict[str, str]:
    """The parent's environment without any COLONNADE_ setting, plus these (and a private data_dir)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("COLONNADE_") and k != "COLUMNS"}
    return {**env, "COLONNADE_DATA_DIR": str(tmp / "data"), **settings}


def _run(
    args: list[str], env: dict[str, str], cwd: Path, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(COLONNADE), *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


@contextmanager
def _listening(port: int) -> Iterator[None]:
    """Someone else's server on 127.0.0.1:port."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        sock.listen()
        yield


def _one_error_line(run: subprocess.CompletedProcess[str]) -> str:
    assert run.returncode == 2, run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, run.stderr
    return lines[0]


def test_serve_with_an_unreachable_postgresql_says_so_in_one_line(tmp_path: Path) -> None:
    url = f"postgresql+asyncpg://app:s3cret@127.0.0.1:{free_port()}/colonnade"
    run = _run(["serve", "--port", str(free_port())], _env(tmp_path, COLONNADE_DATABASE_URL=url), tmp_path)
    line = _one_error_line(run)
    assert line.startswith("error: cannot use the database 'postgresql+asyncpg://app:***@127.0.0.1:")
    assert "check database_url (COLONNADE_DATABASE_URL) and that the database is running" in line
    assert "s3cret" not in run.stderr


def test_serve_on_a_busy_port_stops_before_serving(tmp_path: Path) -> None:
    port = free_port()
    with _listening(port):
        run = _run(
            ["serve", "--port", str(port), "-C", str(ROOT / "examples" / "contracts")],
            _env(tmp_path),
            tmp_path,
        )
    line = _one_error_line(run)
    assert line == (
        f"error: port {port} on 127.0.0.1 is in use (by another gateway or program); choose another with "
        "--port, server.port in colonnade.yaml or COLONNADE_SERVER__PORT"
    )
    assert "serving" not in run.stdout + run.stderr
    assert not (tmp_path / "data").exists()  # nothing was migrated or created


def test_stdio_with_nothing_to_serve_warns_on_stderr(tmp_path: Path) -> None:
    env = _env(tmp_path)
    del env["COLONNADE_DATA_DIR"]  # as a client would start it: default data_dir, its own folder
    run = _run(["serve", "--stdio"], env, tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout == ""  # stdout is the protocol
    assert "warning: serving 0 tools over stdio: no contract is configured and none is stored" in run.stderr
    assert f"state is kept in {tmp_path / '.colonnade'}" in run.stderr


def test_stdio_with_contracts_and_an_absolute_data_dir_says_nothing(tmp_path: Path) -> None:
    run = _run(["serve", "--stdio", "-C", str(ROOT / "examples" / "contracts")], _env(tmp_path), tmp_path)
    assert run.returncode == 0, run.stderr
    assert "warning" not in run.stderr and "note:" not in run.stderr


def _time_server() -> str:
    """A `servers:` entry (as COLONNADE_SERVERS) for PyPI `mcp-server-time`, in this venv."""
    command = str(Path(sys.executable).with_name("mcp-server-time"))
    return json.dumps([{"name": "time", "transport": "stdio", "command": command}])


def test_serve_names_the_servers_whose_tools_are_still_coming(tmp_path: Path) -> None:
    """Downstream servers connect after the banner: it names them, and stdio does not warn of 0 tools."""
    env = _env(tmp_path, COLONNADE_SERVERS=_time_server())
    run = _run(["serve", "--stdio"], env, tmp_path)
    assert run.returncode == 0, run.stderr
    assert "serving 0 tools" not in run.stderr, run.stderr

    port = free_port()
    log = tmp_path / "serve.log"
    proc = start_process([str(COLONNADE), "serve", "--port", str(port)], log, cwd=tmp_path, env=env)
    try:
        wait_http(f"http://127.0.0.1:{port}/readyz", proc, log=log)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    assert "  default/time: MCP server (stdio), connecting: its tools join when it is ready" in (
        log.read_text()
    )


def test_the_start_banner_names_a_typo_in_a_server_s_tools_override(tmp_path: Path) -> None:
    """Once the server is ready, the banner's follow-up says what `tools:` got wrong."""
    command = str(Path(sys.executable).with_name("mcp-server-time"))
    typo = {"convert_tim": {"requires_human_approval": True}}
    servers = [{"name": "time", "transport": "stdio", "command": command, "tools": typo}]
    port = free_port()
    log = tmp_path / "serve.log"
    env = _env(tmp_path, COLONNADE_SERVERS=json.dumps(servers))
    proc = start_process([str(COLONNADE), "serve", "--port", str(port)], log, cwd=tmp_path, env=env)
    try:
        wait_http(f"http://127.0.0.1:{port}/readyz", proc, log=log)
        deadline = time.monotonic() + 60
        while "MCP server ready" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    shown = log.read_text()
    assert "  default/time: MCP server ready, 2 tools" in shown, shown
    assert "    warning: tools.convert_tim names no tool of the server; did you mean 'convert_time'?" in shown


def test_serve_names_what_a_served_draft_still_needs(tmp_path: Path) -> None:
    draft = tmp_path / "pets.yaml"
    imported = _run(
        [
            *("contract", "import-openapi", str(ROOT / "tests/fixtures/openapi/petstore_public.yaml")),
            *(
                "--tenant",
                "acme",
                "--api",
                "pets",
                "--base-url",
                "http://127.0.0.1:9/api/v3",
                "-o",
                str(draft),
            ),
        ],
        _env(tmp_path),
        tmp_path,
    )
    assert imported.returncode == 0, imported.stderr
    run = _run(["serve", "--stdio", "-C", str(draft)], _env(tmp_path), tmp_path)
    assert run.returncode == 0, run.stderr
    assert f"warning: acme/pets 1.0.26-SNAPSHOT ({draft}) is a draft with " in run.stderr
    assert "still to review; it is served for trying out:" in run.stderr
    assert "  - security scheme petstore_auth: oauth2: obtain an access token" in run.stderr
    assert "more under needs_review in" in run.stderr


def test_smoke_defaults_to_the_configured_gateway(tmp_path: Path) -> None:
    port = free_port()
    run = _run(["smoke"], _env(tmp_path, COLONNADE_SERVER__PORT=str(port)), ROOT)
    line = _one_error_line(run)
    assert f"cannot run the smoke against http://127.0.0.1:{port}/mcp" in line


def test_make_run_passes_its_ports_on() -> None:
    def demo_line(*variables: str) -> str:
        env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}  # also under `make test`
        make = subprocess.run(
            ["make", "--no-print-directory", "-n", "-o", ".venv/.installed", "run", *variables],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=30,
            env=env,
        )
        assert make.returncode == 0, make.stderr
        return next(line.strip() for line in make.stdout.splitlines() if "colonnade demo" in line)

    moved = demo_line("PORT=9765", "BACKEND_PORT=9766")
    assert moved == ".venv/bin/colonnade demo --port 9765 --backend-port 9766"
    assert demo_line() == ".venv/bin/colonnade demo"  # no port given: the config decides
    assert demo_line("KEEP_DATA=1") == ".venv/bin/colonnade demo   --keep-data"


def _demo(tmp_path: Path, log: Path, env: dict[str, str], *args: str) -> subprocess.Popen[bytes]:
    return start_process([str(COLONNADE), "demo", *args], log, cwd=tmp_path, env=env)


def test_demo_follows_the_configured_port_and_reruns_with_another_backend_port(tmp_path: Path) -> None:
    """The second run also starts the demo's records again from the seed: run 0 voids INV-2003."""
    gateway_port = free_port()
    env = _env(tmp_path, COLONNADE_SERVER__PORT=str(gateway_port))
    for run, backend_port in enumerate((free_port(), free_port())):
        log = tmp_path / f"demo-{run}.log"
        proc = _demo(tmp_path, log, env, "--backend-port", str(backend_port))
        try:
            wait_http(f"http://127.0.0.1:{gateway_port}/readyz", proc, log=log)
            invoice = f"http://127.0.0.1:{backend_port}/invoices/INV-2003"
            assert httpx2.get(invoice).json()["status"] == "open", f"run {run}: the seed's state"
            voided = httpx2.post(f"{invoice}/void", json={"reason": "Replaced by a corrected invoice"})
            assert voided.json()["status"] == "void"
            # 11 contract tools, 4 functions of the vault organ and 2 pathways
            assert httpx2.get(f"http://127.0.0.1:{gateway_port}/readyz").json()["tools"] == 17
            token = (tmp_path / "data" / "demo-token").read_text().strip()  # requests need a credential
            called = httpx2.post(
                f"http://127.0.0.1:{gateway_port}/v1/calls",
                json={"tool_id": "acme:crm:get_customer", "input": {"customer_id": "C-1001"}},
                headers={"authorization": f"Bearer {token}"},
            ).json()
            assert called["status"] == "success", called
            stored = httpx2.post(
                f"http://127.0.0.1:{gateway_port}/v1/calls",
                json={"tool_id": "acme:vault:store", "input": {"key": f"run-{run}.txt", "content": "hello"}},
                headers={"authorization": f"Bearer {token}"},
            ).json()
            assert stored["status"] == "success", stored
            assert stored["metrics"]["cpu_ms"] is not None
        finally:
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=30) == 0, log.read_text()
    assert "immutable" not in log.read_text()
    assert (tmp_path / "data" / "demo" / "demo_backend.log").is_file()


def test_demo_with_a_busy_backend_port_stops_with_one_line(tmp_path: Path) -> None:
    backend_port = free_port()
    with _listening(backend_port):
        run = _run(
            ["demo", "--port", str(free_port()), "--backend-port", str(backend_port)],
            _env(tmp_path),
            tmp_path,
        )
    line = _one_error_line(run)
    assert line == (
        f"error: port {backend_port} on 127.0.0.1 is in use (by another gateway or program); choose another "
        "with --backend-port (make run BACKEND_PORT=...)"
    )


def test_demo_refuses_one_port_for_both(tmp_path: Path) -> None:
    port = free_port()
    run = _run(["demo", "--port", str(port), "--backend-port", str(port)], _env(tmp_path), tmp_path)
    assert _one_error_line(run).startswith(
        f"error: the gateway and the demo backend cannot share port {port}"
    )


@pytest.mark.parametrize(
    ("args", "settings"),
    [
        (["serve", "--port", "70000"], {}),
        (["serve", "--port", "0"], {}),
        (["serve", "--port=-1"], {}),
        (["demo", "--port", "70000"], {}),
        (["demo", "--backend-port", "0"], {}),
        (["serve"], {"COLONNADE_SERVER__PORT": "0"}),
    ],
)
def test_a_port_out_of_range_is_refused_before_serving(
    tmp_path: Path, args: list[str], settings: dict[str, str]
) -> None:
    run = _run(args, _env(tmp_path, COLUMNS="200", **settings), tmp_path, timeout=30)
    assert run.returncode == 2, run.stdout + run.stderr
    assert "Traceback" not in run.stderr and "serving" not in run.stdout
    said = " ".join(run.stderr.split())
    assert "port" in said and ("65535" in said or "greater than or equal to 1" in said), said


def test_a_host_that_does_not_resolve_points_at_the_host_setting(tmp_path: Path) -> None:
    run = _run(["serve", "--host", "nohost.invalid", "--port", str(free_port())], _env(tmp_path), tmp_path)
    line = _one_error_line(run)
    assert "the host 'nohost.invalid' does not resolve" in line
    assert "choose another with --host, server.host in colonnade.yaml or COLONNADE_SERVER__HOST" in line


@pytest.mark.parametrize("keep_data", [False, True])
def test_the_demo_s_records_start_from_the_seed_unless_kept(tmp_path: Path, keep_data: bool) -> None:
    from colonnade.cli.demo import _fresh_demo_dir

    records = [tmp_path / name for name in ("demo_backend.db", "demo_backend.db-wal", "vault/vault.db")]
    store = tmp_path / "colonnade.db"
    for path in [*records, store]:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("earlier run")
    _fresh_demo_dir(tmp_path, keep_data=keep_data)
    assert [path.exists() for path in records] == [keep_data] * len(records)
    assert not store.exists()  # the contract store is always fresh (its contracts are regenerated)


def test_commands_run_beside_the_demo_follow_its_port_and_store(tmp_path: Path) -> None:
    """`make run PORT=...`, then `status`, `tools list`, `audit verify`, `keys list` with no settings:
    they find the demo's address (data_dir/demo.json) and its store (data_dir/demo/)."""
    port, env = free_port(), _env(tmp_path)
    log = tmp_path / "demo.log"
    proc = _demo(tmp_path, log, env, "--port", str(port), "--backend-port", str(free_port()))
    try:
        wait_http(f"http://127.0.0.1:{port}/readyz", proc, log=log)
        address = json.loads((tmp_path / "data" / "demo.json").read_text())
        assert address["base_url"] == f"http://127.0.0.1:{port}"
        status = _run(["status"], env, tmp_path)
        assert status.returncode == 0, status.stderr
        listed = _run(["tools", "list"], env, tmp_path)
        assert listed.returncode == 0 and "acme:crm:get_customer" in listed.stdout, listed.stderr
        token = (tmp_path / "data" / "demo-token").read_text().strip()
        called = httpx2.post(
            f"http://127.0.0.1:{port}/v1/calls",
            json={"tool_id": "acme:crm:get_customer", "input": {"customer_id": "C-1001"}},
            headers={"authorization": f"Bearer {token}"},
        ).json()
        assert called["status"] == "success", called
        verified = _run(["audit", "verify"], env, tmp_path)
        assert verified.returncode == 0, verified.stderr
        assert "intact: 0 records" not in verified.stdout, verified.stdout
        assert f"the demo's store: {tmp_path / 'data' / 'demo'}" in verified.stderr
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0, log.read_text()
    assert not (tmp_path / "data" / "demo.json").exists()  # gone with the demo: no stale address
    after = _run(["keys", "list"], env, tmp_path)  # a stopped demo's store is named, not written to
    assert after.returncode == 0 and "the demo's store" not in after.stderr, after.stderr
    assert "the demo (make run) keeps its own store: run this with COLONNADE_DATA_DIR=" in after.stdout
