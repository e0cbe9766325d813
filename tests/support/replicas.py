"""N gateway replicas (`colonnade serve` processes) behind HAProxy, on a private PostgreSQL database.

The setup is `make replicas`' own (scripts/replica_setup.py): the HAProxy configuration of deploy/, the
replicas' environment (one database, one audit key, one approval key, the balancer's resource URL,
Redis once the settings have `shared_state.redis_url`) and an admin API key from the shared database.
What the tests add: free ports, a database of their own dropped afterwards, the contracts they serve,
and `kill -9` / restart of one replica. Without HAProxy (`make haproxy` installs it) the tests skip.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest
from prometheus_client.parser import text_string_to_metric_families
from scripts.replica_setup import (
    drop_database,
    ensure_database,
    find_haproxy,
    haproxy_config,
    mint_admin_key,
    prepare_shared_keys,
    replica_environment,
)

from tests.support.loopback import free_port, start_process, stop_process, wait_http
from tests.support.machine_load import patient

__all__ = [
    "REDIS_URL",
    "REPLICA_HEADER",
    "Replica",
    "ReplicaSet",
    "haproxy_missing_reason",
    "running_replicas",
]

COLONNADE = Path(sys.executable).with_name("colonnade")
REDIS_URL = "redis://127.0.0.1:6379/0"
REPLICA_HEADER = "x-colonnade-replica"


@dataclass
class Replica:
    """One `colonnade serve` process; `kill()` is SIGKILL, `start()` starts it again on its port."""

    name: str
    port: int
    env: dict[str, str]
    folder: Path
    proc: subprocess.Popen[bytes] | None = None
    starts: int = 0
    token: str = ""
    """An admin credential (/metrics needs one, as every route but the probes)."""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log(self) -> Path:
        return self.folder / f"{self.name}-{self.starts}.log"

    def launch(self) -> None:
        """Start the process; `wait_ready()` waits for it (replicas start side by side)."""
        self.starts += 1
        command = [str(COLONNADE), "serve", "--host", "127.0.0.1", "--port", str(self.port)]
        self.proc = start_process(command, self.log, cwd=self.folder, env=self.env)

    def wait_ready(self) -> None:
        """Until /readyz answers: replicas start side by side, so a wait is for a few starts at once."""
        assert self.proc is not None
        wait_http(f"{self.url}/readyz", self.proc, timeout=60, log=self.log)

    def start(self, contracts: Sequence[Path] | None = None) -> None:
        """Start (again), with these contracts published at start-up when given."""
        if contracts is not None:
            self.env["COLONNADE_CONTRACTS"] = json.dumps([str(path) for path in contracts])
        self.launch()
        self.wait_ready()

    def kill(self) -> None:
        """`kill -9`: no drain, no goodbye; what it had in flight is cut."""
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc)

    def metrics(self) -> str:
        headers = {"Authorization": f"Bearer {self.token}"}
        answer = httpx2.get(f"{self.url}/metrics", headers=headers, timeout=30)
        assert answer.status_code == 200, (self.name, answer.status_code, answer.text[:300])
        return answer.text

    def calls_served(self) -> float:
        """Calls this replica has answered so far (its `colonnade_calls_total`, every tool and status)."""
        return sum(
            sample.value
            for family in text_string_to_metric_families(self.metrics())
            if family.name == "colonnade_calls"
            for sample in family.samples
            if sample.name == "colonnade_calls_total"
        )


@dataclass
class ReplicaSet:
    """The replicas, the balancer in front of them and an admin token every replica accepts."""

    replicas: list[Replica]
    lb_url: str
    token: str
    database_url: str
    haproxy: subprocess.Popen[bytes]
    folder: Path

    @property
    def mcp_url(self) -> str:
        return f"{self.lb_url}/mcp"

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def by_name(self, name: str) -> Replica:
        return next(replica for replica in self.replicas if replica.name == name)

    def wait_all_served(self) -> None:
        """Until every replica has answered through the balancer (HAProxy marks them up by checks)."""
        names = {replica.name for replica in self.replicas}
        seen: set[str] = set()
        deadline = time.monotonic() + patient(30)
        with httpx2.Client(timeout=10) as client:
            while seen != names:
                assert self.haproxy.poll() is None, (self.folder / "haproxy.log").read_text()
                assert time.monotonic() < deadline, f"never answered through the balancer: {names - seen}"
                try:
                    answer = client.get(f"{self.lb_url}/readyz")
                except httpx2.HTTPError:
                    answer = None
                if answer is not None and answer.status_code == 200:
                    seen.add(answer.headers.get(REPLICA_HEADER, ""))
                time.sleep(0.05)

    def calls_served(self) -> dict[str, float]:
        return {replica.name: replica.calls_served() for replica in self.replicas}


def haproxy_missing_reason() -> str | None:
    if find_haproxy() is None:
        return "HAProxy is not installed: `make haproxy` installs Debian's package (as root)"
    return None


@contextmanager
def running_replicas(
    folder: Path,
    postgres_url: str,
    contracts: Sequence[Path],
    *,
    count: int = 3,
    redis_url: str | None = REDIS_URL,
    settings: Mapping[str, str] | None = None,
    check_ms: int = 300,
) -> Iterator[ReplicaSet]:
    """`count` replicas serving `contracts` behind HAProxy, on a new database of the PostgreSQL server
    of `postgres_url`; `settings` are more COLONNADE_* variables for every replica. Everything is
    stopped and the database dropped on exit."""
    haproxy = find_haproxy()
    if haproxy is None:
        pytest.skip(haproxy_missing_reason() or "")
    name = f"colonnade_replicas_{uuid.uuid4().hex[:12]}"
    lb_port = free_port()
    lb_url = f"http://127.0.0.1:{lb_port}"
    keys = prepare_shared_keys(folder / "keys")
    base = {key: value for key, value in os.environ.items() if not key.startswith("COLONNADE_")}
    replicas: list[Replica] = []
    balancer: subprocess.Popen[bytes] | None = None
    database_url, _ = ensure_database(postgres_url, name)
    try:
        for n in range(1, count + 1):
            data_dir = folder / f"r{n}"
            data_dir.mkdir(parents=True, exist_ok=True)
            env = replica_environment(
                base,
                data_dir=data_dir,
                database_url=database_url,
                keys=keys,
                contracts=contracts,
                lb_url=lb_url,
                redis_url=redis_url,
                key_prefix=name,
            )
            replicas.append(Replica(f"r{n}", free_port(), {**env, **(settings or {})}, folder))
        for replica in replicas:
            replica.launch()
        with ThreadPoolExecutor(1) as minting:
            token = minting.submit(mint_admin_key, replicas[0].env, owner="replica-tests")
            for replica in replicas:
                replica.wait_ready()
            admin_key = token.result()
        for replica in replicas:
            replica.token = admin_key
        config = folder / "haproxy.cfg"
        config.write_text(haproxy_config(lb_port, [r.port for r in replicas], check_ms=check_ms))
        checked = subprocess.run([haproxy, "-c", "-q", "-f", str(config)], capture_output=True, text=True)
        assert checked.returncode == 0, checked.stdout + checked.stderr
        balancer = start_process([haproxy, "-f", str(config)], folder / "haproxy.log", cwd=folder)
        deployment = ReplicaSet(replicas, lb_url, admin_key, database_url, balancer, folder)
        deployment.wait_all_served()
        yield deployment
    finally:
        if balancer is not None:
            stop_process(balancer)
        for replica in replicas:
            replica.stop()
        drop_database(postgres_url, name)
