"""Stopping the gateway: SIGTERM (what orchestrators send) and Ctrl-C end in a clean shutdown.

uvicorn re-raises the stop signal once it has stopped serving, which used to kill the process
before the gateway drained calls and saved its state; these tests hold the fixed behaviour.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.e2e.conftest import COLONNADE, contracts_for
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
