"""Real processes on loopback: the demo backend and the gateway, started once per test module."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.support.fault_gateway import FaultGateway, Serve, start_fault_gateway
from tests.support.loopback import free_port, start_process, stop_process, wait_http

ROOT = Path(__file__).resolve().parents[2]
COLONNADE = Path(sys.executable).with_name("colonnade")


def contracts_for(backend_url: str, dest: Path) -> list[Path]:
    """Copies of the demo contracts pointing at this test's backend."""
    dest.mkdir(parents=True, exist_ok=True)
    paths = []
    for src in sorted((ROOT / "examples" / "contracts").glob("*.yaml")):
        data = yaml.safe_load(src.read_text())
        data["backend"]["base_url"] = backend_url
        out = dest / src.name
        out.write_text(yaml.safe_dump(data, sort_keys=False))
        paths.append(out)
    return paths


@dataclass
class Stack:
    backend_url: str
    gateway_url: str
    mcp_url: str
    contracts: list[Path]
    env: dict[str, str]


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    tmp = tmp_path_factory.mktemp("stack")
    backend_port, gateway_port = free_port(), free_port()
    backend_url = f"http://127.0.0.1:{backend_port}"
    backend_log, gateway_log = tmp / "backend.log", tmp / "gateway.log"
    backend = start_process(
        [
            sys.executable,
            "-m",
            "examples.demo_backend",
            "--port",
            str(backend_port),
            "--db",
            str(tmp / "demo.db"),
        ],
        backend_log,
        cwd=ROOT,
    )
    gateway = None
    try:
        wait_http(f"{backend_url}/healthz", backend, log=backend_log)
        contracts = contracts_for(backend_url, tmp / "contracts")
        env = {
            **os.environ,
            "COLONNADE_DATA_DIR": str(tmp / "data"),
            "COLONNADE_CONTRACTS": json.dumps([str(p) for p in contracts]),
        }
        env.pop("COLONNADE_DATABASE_URL", None)
        gateway = start_process(
            [str(COLONNADE), "serve", "--host", "127.0.0.1", "--port", str(gateway_port)],
            gateway_log,
            cwd=tmp,
            env=env,
        )
        gateway_url = f"http://127.0.0.1:{gateway_port}"
        wait_http(f"{gateway_url}/readyz", gateway, log=gateway_log)
        yield Stack(backend_url, gateway_url, f"{gateway_url}/mcp", contracts, env)
    finally:
        if gateway is not None:
            stop_process(gateway)
        stop_process(backend)


@pytest.fixture(scope="module")
def fault_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The fault backend (tests/support/fault_backend.py) as a process."""
    port = free_port()
    log = tmp_path_factory.mktemp("fault-backend") / "backend.log"
    command = [sys.executable, "-m", "tests.support.fault_backend", "--port", str(port)]
    proc = start_process(command, log, cwd=ROOT)
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc, log=log)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop_process(proc)


@pytest.fixture
def serve(tmp_path: Path, fault_url: str) -> Iterator[Serve]:
    """Start gateways serving the fault contract, with `server.*` settings given as keywords."""
    started: list[FaultGateway] = []

    def start(args: Sequence[str] = (), **server: object) -> FaultGateway:
        started.append(start_fault_gateway(COLONNADE, tmp_path, fault_url, args, **server))
        return started[-1]

    yield start
    for gateway in started:
        stop_process(gateway.proc)
