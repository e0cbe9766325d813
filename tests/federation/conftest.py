"""A gateway process (`colonnade serve`) with real downstream MCP servers behind it."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import yaml

from tests.support.loopback import free_port, start_process, stop_process, wait_http
from tests.support.machine_load import patient

COLONNADE = Path(sys.executable).with_name("colonnade")


@dataclass
class Federation:
    base: str
    log: Path

    @property
    def mcp(self) -> str:
        return f"{self.base}/mcp"

    def server(self, name: str) -> str:
        return f"{self.base}/servers/{name}/mcp"

    def status(self) -> dict[str, Any]:
        response = httpx2.get(f"{self.base}/v1/status", timeout=10)
        response.raise_for_status()
        return dict(response.json())

    def server_status(self, name: str) -> dict[str, Any]:
        return next(s for s in self.status()["servers"] if s["name"] == name)

    def wait_ready(self, *names: str, timeout: float = 90.0) -> None:
        """Until each named server (every server when none is named) is ready; `timeout` grows with load."""
        deadline = time.monotonic() + patient(timeout)
        while True:
            servers = {s["name"]: s for s in self.status()["servers"]}
            waiting = [n for n in (names or servers) if servers[n]["state"] not in ("ready", "idle")]
            if not waiting:
                return
            if time.monotonic() > deadline:
                details = json.dumps([servers[n] for n in waiting], indent=1)
                raise AssertionError(f"servers not ready: {details}\n{self.log.read_text()[-3000:]}")
            time.sleep(0.2)


@contextlib.contextmanager
def run_gateway(
    tmp: Path, servers: list[dict[str, Any]], *, env: dict[str, str] | None = None, **settings: Any
) -> Iterator[Federation]:
    """`colonnade serve` with these `servers:` (and other settings), until every server is ready.

    `env` adds variables (secrets) to the gateway's environment; `settings["ready"]` names the
    servers to wait for (default: all).
    """
    ready = settings.pop("ready", None)
    tmp.mkdir(parents=True, exist_ok=True)
    config = {"data_dir": str(tmp / "data"), "servers": servers, **settings}
    (tmp / "colonnade.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    environ = {k: v for k, v in os.environ.items() if not k.startswith("COLONNADE_")} | (env or {})
    port = free_port()
    log = tmp / "gateway.log"
    process = start_process(
        [str(COLONNADE), "serve", "--host", "127.0.0.1", "--port", str(port)], log, cwd=tmp, env=environ
    )
    federation = Federation(f"http://127.0.0.1:{port}", log)
    try:
        wait_http(f"{federation.base}/readyz", process, log=log)
        federation.wait_ready(*(ready or ()))
        yield federation
    finally:
        stop_process(process)


def approve_by_cli(folder: Path, approval_id: str, *extra: str) -> None:
    """An approver (bob) decides a parked call with `colonnade approvals approve`, in the gateway's folder."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("COLONNADE_")}
    done = subprocess.run(
        [str(COLONNADE), "approvals", "approve", approval_id, "--as", "bob", *extra],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
