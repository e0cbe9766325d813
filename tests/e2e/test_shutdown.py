"""Stopping the gateway: SIGTERM (what orchestrators send) and Ctrl-C end in a clean shutdown.

uvicorn re-raises the stop signal once it has stopped serving, which used to kill the process
before the gateway drained calls and saved its state; these tests hold the fixed behaviour.
The drain has a limit (`server.drain_timeout_s`): a call still running then is answered with
the retryable `R-CAP-SHUTTING-DOWN`, and a second signal does that at once. The slow calls go
to the fault backend (a real process), through the REST surface of a real gateway process.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.e2e.conftest import COLONNADE, contracts_for
from tests.support.fault_gateway import Serve
from tests.support.loopback import free_port, start_process, stop_process, wait_http


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stop_signal_drains_saves_and_exits_zero(tmp_path: Path, sig: signal.Signals) -> None:
    port = free_port()
    data = tmp_path / "data"
    # The backend is never called: publishing and indexing need only the contracts.
    contracts = contracts_for(f"http://127.0.0.1:{free_port()}", tmp_path / "contracts")
    env = {
        **os.environ,
        "COLONNADE_DATA_DIR": str(data),
        "COLONNADE_CONTRACTS": json.dumps([str(p) for p in contracts]),
    }
    env.pop("COLONNADE_DATABASE_URL", None)
    log = tmp_path / "gateway.log"
    proc = start_process([str(COLONNADE), "serve", "--port", str(port)], log, cwd=tmp_path, env=env)
    try:
        wait_http(f"http://127.0.0.1:{port}/readyz", proc, log=log)
        os.kill(proc.pid, sig)
        code = proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the gateway did not stop within 20 s of {sig.name}")
    finally:
        stop_process(proc)
    output = log.read_text(errors="replace")
    assert code == 0, output
    assert "gateway stopped: calls drained, state saved" in output
    assert "Traceback" not in output


def _outcome(response: httpx2.Response) -> tuple[str, str | None, dict[str, Any]]:
    result = response.json()
    error = result["error"] or {}
    return result["status"], error.get("code"), error.get("details", {})


def test_a_call_shorter_than_the_drain_limit_finishes_normally(serve: Serve) -> None:
    gateway = serve(drain_timeout_s=30)
    with ThreadPoolExecutor(1) as pool:
        answer = gateway.call_slowly(pool, backend_ms=1_500)
        os.kill(gateway.proc.pid, signal.SIGTERM)
        assert _outcome(answer.result()) == ("success", None, {})
    assert gateway.exit_code(within_s=20) == 0


def test_at_the_drain_limit_calls_still_running_end_retryable_and_the_process_exits(serve: Serve) -> None:
    gateway = serve(args=["--drain-timeout", "1"])  # the flag, over the default of 10 s
    with ThreadPoolExecutor(1) as pool:
        answer = gateway.call_slowly(pool, backend_ms=60_000)
        os.kill(gateway.proc.pid, signal.SIGTERM)
        status, code, details = _outcome(answer.result())
    assert (status, code) == ("retryable_error", "R-CAP-SHUTTING-DOWN")
    assert details == {"retry_after_ms": 1_000, "interrupted": True}
    assert gateway.exit_code(within_s=20) == 0  # the backend would have taken 60 s
    output = gateway.log.read_text(errors="replace")
    assert "the drain limit of 1 s; 1 call(s) still running end with R-CAP-SHUTTING-DOWN" in output
    assert "gateway stopped: calls drained, state saved" in output
    assert "Traceback" not in output


def test_a_second_signal_ends_the_calls_at_once(serve: Serve) -> None:
    gateway = serve(drain_timeout_s=300)
    with ThreadPoolExecutor(1) as pool:
        answer = gateway.call_slowly(pool, backend_ms=60_000)
        os.kill(gateway.proc.pid, signal.SIGTERM)
        gateway.wait_stopped_listening()
        os.kill(gateway.proc.pid, signal.SIGTERM)
        status, code, _ = _outcome(answer.result())
    assert (status, code) == ("retryable_error", "R-CAP-SHUTTING-DOWN")
    gateway.exit_code(within_s=20)  # not the 300 s drain limit, nor the backend's 60 s
    output = gateway.log.read_text(errors="replace")
    assert "a second stop signal; 1 call(s) still running end" in output
    assert "Traceback" not in output
