"""Real processes on loopback: the demo backend and the gateway, started once per test module."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.support.loopback import free_port, stop_process, wait_http

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
    backend = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "examples.demo_backend",
            "--host",
            "127.0.0.1",
            "--port",
            str(backend_port),
            "--db",
            str(tmp / "demo.db"),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    gateway = None
    try:
        wait_http(f"{backend_url}/healthz", backend)
        contracts = contracts_for(backend_url, tmp / "contracts")
        env = {
            **os.environ,
            "COLONNADE_DATA_DIR": str(tmp / "data"),
            "COLONNADE_CONTRACTS": json.dumps([str(p) for p in contracts]),
        }
        env.pop("COLONNADE_DATABASE_URL", None)
        gateway = subprocess.Popen(
            [str(COLONNADE), "serve", "--host", "127.0.0.1", "--port", str(gateway_port)],
            cwd=tmp,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        gateway_url = f"http://127.0.0.1:{gateway_port}"
        wait_http(f"{gateway_url}/readyz", gateway)
        yield Stack(backend_url, gateway_url, f"{gateway_url}/mcp", contracts, env)
    finally:
        if gateway is not None:
            stop_process(gateway)
        stop_process(backend)
