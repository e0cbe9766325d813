"""What `make replicas` runs (scripts/replicas.py up / down), in a folder of the test's own.

`up` returns once every replica has answered through HAProxy; the admin key it wrote is accepted
through the balancer by every replica; a second `up` is refused while the first runs; `down` stops
every process it started, and a second `down` finds nothing to stop.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from scripts.replica_setup import drop_database

from tests.support.loopback import free_port
from tests.support.machine_load import patient
from tests.support.replicas import REPLICA_HEADER, haproxy_missing_reason
from tests.support.repo import ROOT

SCRIPT = ROOT / "scripts" / "replicas.py"


def _run(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("COLONNADE_")}
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        cwd=folder,
        env={**env, "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=patient(240),
        check=False,
    )


@pytest.fixture
def database(postgres_url: str) -> Iterator[str]:
    name = f"colonnade_make_replicas_{uuid.uuid4().hex[:12]}"
    yield name
    drop_database(postgres_url, name)


def test_up_serves_through_the_balancer_and_down_stops_everything(
    tmp_path: Path, database: str, postgres_url: str
) -> None:
    if (reason := haproxy_missing_reason()) is not None:
        pytest.skip(reason)
    port, backend_port = free_port(), free_port()
    started = _run(
        tmp_path, "up", "--port", str(port), "--backend-port", str(backend_port),
        "--replicas", "2", "--postgres", postgres_url, "--database", database,
    )  # fmt: skip
    try:
        assert started.returncode == 0, started.stdout + started.stderr
        assert f"http://127.0.0.1:{port}/mcp" in started.stdout
        token = (tmp_path / ".colonnade" / "replicas-token").read_text().strip()
        assert token.startswith("col_")
        assert oct((tmp_path / ".colonnade" / "replicas-token").stat().st_mode & 0o777) == "0o600"

        served: Counter[str] = Counter()
        with httpx2.Client(headers={"Authorization": f"Bearer {token}"}, timeout=30) as client:
            for _ in range(6):
                answer = client.get(f"http://127.0.0.1:{port}/v1/tools")
                assert answer.status_code == 200, answer.text[:300]
                assert any(t["canonical_name"].startswith("acme:") for t in answer.json()["tools"])
                served[answer.headers[REPLICA_HEADER]] += 1
            assert (
                client.get(f"http://127.0.0.1:{port}/v1/tools", headers={"Authorization": ""}).status_code
                == 401
            )
        assert served == {"r1": 3, "r2": 3}, served  # round-robin, one request each in turn

        again = _run(tmp_path, "up", "--port", str(free_port()), "--backend-port", str(free_port()))
        assert again.returncode == 1 and "already running" in again.stdout, again.stdout + again.stderr
    finally:
        pids = [int(p.read_text()) for p in (tmp_path / ".colonnade" / "replicas").glob("*.pid")]
        stopped = _run(tmp_path, "down")
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    assert "stopped: haproxy, r2, r1, demo-backend" in stopped.stdout, stopped.stdout
    assert len(pids) == 4 and not [pid for pid in pids if _running(pid)], pids
    assert "no replicas to stop" in _run(tmp_path, "down").stdout


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"
