"""A real gateway process serving the fault backend's contract, for end-to-end tests of stops and overload."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest
import yaml

from tests.support.fault_contract import fault_contract
from tests.support.loopback import free_port, start_process, wait_http
from tests.support.machine_load import patient

__all__ = ["TOOL", "FaultGateway", "Serve", "start_fault_gateway"]

TOOL = "chaos:faults:get_item"


@dataclass
class FaultGateway:
    proc: subprocess.Popen[bytes]
    url: str
    log: Path

    def call(self, fault: str = "ok", **constraints: Any) -> httpx2.Response:
        request = {"tool_id": TOOL, "input": {"item_id": "I-1", "fault": fault}, "constraints": constraints}
        return httpx2.post(f"{self.url}/v1/calls", json=request, timeout=120)

    def call_slowly(self, pool: ThreadPoolExecutor, backend_ms: int) -> Future[httpx2.Response]:
        """A REST call whose backend takes `backend_ms`; returns once the gateway has it in flight."""
        answer = pool.submit(self.call, f"slow:{backend_ms}", timeout_ms=100_000)
        deadline = time.monotonic() + patient(20)
        while f'colonnade_calls_in_flight{{tool="{TOOL}"}} 1.0' not in self.metrics():
            assert time.monotonic() < deadline and not answer.done(), "the call never got in flight"
            time.sleep(0.05)
        return answer

    def metrics(self) -> str:
        return httpx2.get(f"{self.url}/metrics").text

    def wait_stopped_listening(self) -> None:
        """The first stop signal has been handled once new connections are refused."""
        port = int(self.url.rsplit(":", 1)[1])
        deadline = time.monotonic() + patient(20)
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
            except OSError:
                return
            time.sleep(0.05)
        pytest.fail("the gateway kept listening after the stop signal")

    def exit_code(self, within_s: float) -> int:
        try:
            return self.proc.wait(timeout=within_s)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the gateway did not exit within {within_s:g} s")


Serve = Callable[..., FaultGateway]
"""`serve(drain_timeout_s=1, max_calls_in_flight=1)`: a gateway with these `server.*` settings
(`args=[...]` adds command-line options of `colonnade serve`)."""


def start_fault_gateway(
    colonnade: Path, folder: Path, fault_url: str, args: Sequence[str] = (), **server: Any
) -> FaultGateway:
    contract = folder / "faults.yaml"
    contract.write_text(yaml.safe_dump(fault_contract(fault_url), sort_keys=False))
    env = {
        **os.environ,
        "COLONNADE_DATA_DIR": str(folder / "data"),
        "COLONNADE_CONTRACTS": json.dumps([str(contract)]),
        **{f"COLONNADE_SERVER__{key.upper()}": str(value) for key, value in server.items()},
    }
    env.pop("COLONNADE_DATABASE_URL", None)
    port, log = free_port(), folder / "gateway.log"
    command = [str(colonnade), "serve", "--port", str(port), *args]
    proc = start_process(command, log, cwd=folder, env=env)
    gateway = FaultGateway(proc, f"http://127.0.0.1:{port}", log)
    wait_http(f"{gateway.url}/readyz", proc, log=log)
    return gateway
