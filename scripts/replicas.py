"""`make replicas` / `make replicas-stop`: gateway replicas on PostgreSQL and Redis behind HAProxy.

`up` starts, each in a session of its own so that they outlive `make`:
- the demo backend (examples/demo_backend.py) that the demo contracts call;
- N `colonnade serve` replicas on free ports, each with a data_dir of its own but one database
  (PostgreSQL, `colonnade_replicas`, created if missing), one audit key and one approval signing key
  (made here before any replica starts, so no two replicas make different ones) and, once the
  settings have `shared_state.redis_url`, one Redis;
- HAProxy (deploy/haproxy.cfg filled in) on PORT, round-robin per request, no stickiness;
then mints an admin API key (kept in the shared database, so every replica accepts it) into
.colonnade/replicas-token and returns once every replica has answered through the balancer.
`down` stops what `up` started, from the pid files under .colonnade/replicas/. `keys FOLDER` makes
the shared keys alone (for the Kubernetes Secret of deploy/kubernetes/).

What the replicas share is made by scripts/replica_setup.py, which the replica tests use too.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import httpx2
import yaml
from replica_setup import (
    COLONNADE,
    REDIS_SETTING,
    ReplicasError,
    ensure_database,
    find_haproxy,
    haproxy_config,
    mint_admin_key,
    prepare_shared_keys,
    replica_environment,
    settings_accept,
    tail,
)
from rich.console import Console

__all__ = ["main"]

ROOT = Path(__file__).resolve().parents[1]
DEMO_CONTRACTS = ROOT / "examples" / "contracts"
STATE_DIR = Path(".colonnade") / "replicas"
TOKEN_FILE = Path(".colonnade") / "replicas-token"
DATABASE = "colonnade_replicas"
POSTGRES = "postgresql+asyncpg://postgres@127.0.0.1:5432/postgres"
REDIS = "redis://127.0.0.1:6379/0"
_STOP_WAIT_S = 20.0
_START_WAIT_S = 120.0

console = Console(highlight=False, soft_wrap=True)


@dataclass
class Started:
    """One process `up` started: enough for `down` to find it again and be sure it is ours."""

    name: str
    pid: int
    command: list[str]
    log: str
    port: int


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _port_free(host: str, port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def _detached(command: list[str], log: Path, env: Mapping[str, str], cwd: Path) -> subprocess.Popen[bytes]:
    """A child in its own session (it outlives `make`), its output in `log`."""
    with log.open("wb") as sink:
        return subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
            env=dict(env),
            cwd=cwd,
            start_new_session=True,
        )


def _wait_http(url: str, proc: subprocess.Popen[bytes], log: Path, what: str) -> None:
    deadline = time.monotonic() + _START_WAIT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ReplicasError(
                f"{what} exited with code {proc.returncode}: {tail(log.read_text(errors='replace'))}"
                f" (log: {log})"
            )
        with contextlib.suppress(httpx2.HTTPError):
            if httpx2.get(url, timeout=2.0).status_code == 200:
                return
        time.sleep(0.2)
    raise ReplicasError(f"{what} did not answer at {url} within {_START_WAIT_S:.0f} s (log: {log})")


def _served_by_each(lb_url: str, names: set[str], proc: subprocess.Popen[bytes], log: Path) -> None:
    """Until every replica has answered a request through the balancer (its X-Colonnade-Replica)."""
    seen: set[str] = set()
    deadline = time.monotonic() + _START_WAIT_S
    with httpx2.Client(timeout=5.0) as client:
        while seen != names:
            if proc.poll() is not None:
                raise ReplicasError(f"HAProxy exited with code {proc.returncode}: {tail(log.read_text())}")
            if time.monotonic() > deadline:
                missing = ", ".join(sorted(names - seen))
                raise ReplicasError(f"replicas {missing} never answered through the balancer at {lb_url}")
            with contextlib.suppress(httpx2.HTTPError):
                answer = client.get(f"{lb_url}/readyz")
                if answer.status_code == 200:
                    seen.add(answer.headers.get("x-colonnade-replica", ""))
            time.sleep(0.05)


def _demo_contracts(target: Path, backend_url: str) -> Path:
    """The bundled demo contracts, pointed at this deployment's demo backend."""
    target.mkdir(parents=True, exist_ok=True)
    for stale in target.glob("*.yaml"):
        stale.unlink()
    for source in sorted(DEMO_CONTRACTS.glob("*.yaml")):
        data = yaml.safe_load(source.read_text(encoding="utf-8"))
        data["backend"]["base_url"] = backend_url
        (target / source.name).write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return target


def _write_secret(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as sink:
        sink.write(text + "\n")


def _redis_problem(url: str) -> str | None:
    """None when the Redis at `url` answers PING (spoken here: the client library is not needed)."""
    from urllib.parse import urlsplit

    where = urlsplit(url)
    try:
        with socket.create_connection((where.hostname or "127.0.0.1", where.port or 6379), timeout=3) as sock:
            sock.sendall(b"PING\r\n")
            answer = sock.recv(64)
    except OSError as exc:
        return exc.strerror or str(exc)
    return None if answer.startswith((b"+PONG", b"-NOAUTH")) else f"unexpected answer {answer[:40]!r}"


class Deployment:
    """The processes of one `make replicas`, recorded in STATE_DIR/state.json and one pid file each."""

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = state_dir
        self.started: list[Started] = []

    @property
    def state_file(self) -> Path:
        return self.state_dir / "state.json"

    def record(
        self, name: str, proc: subprocess.Popen[bytes], command: list[str], log: Path, port: int
    ) -> None:
        self.started.append(Started(name, proc.pid, command, str(log), port))
        (self.state_dir / f"{name}.pid").write_text(f"{proc.pid}\n")
        self.state_file.write_text(json.dumps([asdict(s) for s in self.started], indent=2))

    def load(self) -> None:
        if self.state_file.exists():
            self.started = [Started(**entry) for entry in json.loads(self.state_file.read_text())]

    def alive(self) -> list[Started]:
        return [started for started in self.started if _ours(started)]

    def stop(self) -> list[str]:
        """Stop every recorded process that is still ours: the balancer first, the backend last."""
        stopped = []
        for started in reversed(self.started):
            if _ours(started):
                _terminate(started.pid)
                stopped.append(started.name)
            (self.state_dir / f"{started.name}.pid").unlink(missing_ok=True)
        self.state_file.unlink(missing_ok=True)
        self.started = []
        return stopped


def _ours(started: Started) -> bool:
    """Alive, and running the command we started (a recycled pid belongs to someone else)."""
    try:
        running = Path(f"/proc/{started.pid}/cmdline").read_bytes().split(b"\0")[:-1]
    except OSError:
        return False
    tail = [part.encode() for part in started.command[1:]]
    return running[-len(tail) :] == tail if tail else bool(running)


def _terminate(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + _STOP_WAIT_S
    while time.monotonic() < deadline:
        if not Path(f"/proc/{pid}").exists() or _zombie(pid):
            return
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


@contextlib.contextmanager
def _step(text: str) -> Iterator[None]:
    with console.status(text):
        started = time.monotonic()
        yield
    console.print(f"[green]✓[/green] {text} [dim]({time.monotonic() - started:.1f} s)[/dim]")


def up(args: argparse.Namespace) -> None:
    state_dir = STATE_DIR.resolve()
    state_dir.mkdir(parents=True, exist_ok=True)
    deployment = Deployment(state_dir)
    deployment.load()
    if running := deployment.alive():
        names = ", ".join(f"{s.name} (pid {s.pid})" for s in running)
        raise ReplicasError(f"replicas are already running: {names}; stop them with `make replicas-stop`")
    deployment.stop()  # forget a deployment whose processes are gone
    haproxy = find_haproxy()
    if haproxy is None:
        raise ReplicasError(
            "HAProxy is not installed: `make haproxy` installs Debian's package (as root), or run "
            "`sudo apt-get install haproxy`"
        )
    for port, what in ((args.port, "PORT"), (args.backend_port, "BACKEND_PORT")):
        if not _port_free("127.0.0.1", port):
            raise ReplicasError(f"port {port} is in use; choose another with `make replicas {what}=...`")
    lb_url = f"http://127.0.0.1:{args.port}"
    try:
        _start(args, deployment, haproxy, lb_url)
    except BaseException:
        stopped = deployment.stop()
        if stopped:
            console.print(f"stopped what had started: {', '.join(stopped)}")
        raise


def _start(args: argparse.Namespace, deployment: Deployment, haproxy: str, lb_url: str) -> None:
    state_dir = deployment.state_dir
    with _step(f"PostgreSQL database {args.database}"):
        try:
            database_url, created = ensure_database(args.postgres, args.database, fresh=args.fresh)
        except Exception as exc:
            raise ReplicasError(
                f"cannot open or create the database {args.database} on {args.postgres} "
                f"({type(exc).__name__}: {exc}); start PostgreSQL, or give another server with "
                "`make replicas POSTGRES=postgresql+asyncpg://...`"
            ) from None
    console.print(f"  {'created' if created else 'kept (FRESH=1 starts it again)'}: {database_url}")
    redis_url: str | None = args.redis
    problem = _redis_problem(args.redis)
    if problem is None:
        shared = settings_accept(REDIS_SETTING)
        note = "shared by the replicas" if shared else "reachable; this build's settings have no shared_state"
        console.print(f"[green]✓[/green] Redis {args.redis} ({note})")
    elif settings_accept(REDIS_SETTING):
        raise ReplicasError(f"Redis is not reachable at {args.redis} ({problem}); start it or pass REDIS=url")
    else:
        redis_url = None
        console.print(f"[yellow]![/yellow] Redis {args.redis} is not reachable ({problem}); not used yet")
    with _step("shared audit and approval keys"):
        keys = prepare_shared_keys(state_dir / "keys")
    backend_url = f"http://127.0.0.1:{args.backend_port}"
    with _step(f"demo backend on {backend_url}"):
        command = [
            sys.executable, "-m", "examples.demo_backend",
            "--port", str(args.backend_port), "--db", str(state_dir / "demo_backend.db"),
        ]  # fmt: skip
        log = state_dir / "demo-backend.log"
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        proc = _detached(command, log, env, ROOT)
        deployment.record("demo-backend", proc, command, log, args.backend_port)
        _wait_http(f"{backend_url}/healthz", proc, log, "the demo backend")
    contracts = [_demo_contracts(state_dir / "contracts", backend_url)]
    ports = [_free_port() for _ in range(args.replicas)]
    launched: list[tuple[subprocess.Popen[bytes], Path, int]] = []
    base = {key: value for key, value in os.environ.items() if key != "COLONNADE_CONTRACTS"}
    env = {}
    with _step(f"{args.replicas} gateway replicas on ports {', '.join(map(str, ports))}"):
        for n, port in enumerate(ports, start=1):
            data_dir = state_dir / f"r{n}"
            data_dir.mkdir(exist_ok=True)
            env = replica_environment(
                base, data_dir=data_dir, database_url=database_url, keys=keys,
                contracts=contracts, lb_url=lb_url, redis_url=redis_url,
            )  # fmt: skip
            command = [str(COLONNADE), "serve", "--host", "127.0.0.1", "--port", str(port)]
            log = state_dir / f"r{n}.log"
            proc = _detached(command, log, env, ROOT)
            deployment.record(f"r{n}", proc, command, log, port)
            launched.append((proc, log, port))
        # The key is made while the replicas start (a CLI start-up takes seconds on a busy machine);
        # the migration it may run is serialised with theirs by the database.
        minting = ThreadPoolExecutor(1)
        admin_key = minting.submit(mint_admin_key, env)
        minting.shutdown(wait=False)
        for n, (proc, log, port) in enumerate(launched, start=1):
            try:
                _wait_http(f"http://127.0.0.1:{port}/readyz", proc, log, f"replica r{n}")
            except ReplicasError as exc:
                if created:
                    raise
                raise ReplicasError(
                    f"{exc}; the database was kept from an earlier run: if the contracts or BACKEND_PORT "
                    "changed since, `make replicas FRESH=1` starts it again"
                ) from None
    with _step(f"HAProxy on {lb_url}, round-robin"):
        config = state_dir / "haproxy.cfg"
        config.write_text(haproxy_config(args.port, ports), encoding="utf-8")
        check = subprocess.run([haproxy, "-c", "-q", "-f", str(config)], capture_output=True, text=True)
        if check.returncode != 0:
            raise ReplicasError(f"haproxy -c refused {config}: {tail(check.stdout + check.stderr)}")
        command = [haproxy, "-f", str(config)]
        log = state_dir / "haproxy.log"
        proc = _detached(command, log, os.environ, state_dir)
        deployment.record("haproxy", proc, command, log, args.port)
        _served_by_each(lb_url, {f"r{n}" for n in range(1, args.replicas + 1)}, proc, log)
    with _step(f"admin API key in {TOKEN_FILE}"):
        _write_secret(TOKEN_FILE.resolve(), admin_key.result())
    console.print(
        f"\n[bold]{args.replicas} replicas behind HAProxy[/bold]\n"
        f"  MCP endpoint  {lb_url}/mcp\n"
        f"  REST          {lb_url}/v1/tools\n"
        f'  admin token   {TOKEN_FILE}  (curl -H "Authorization: Bearer $(cat {TOKEN_FILE})" '
        f"{lb_url}/v1/status)\n"
        f"  logs          {STATE_DIR}/r*.log, haproxy.log, demo-backend.log\n"
        "  stop          make replicas-stop"
    )


def down() -> None:
    deployment = Deployment(STATE_DIR.resolve())
    deployment.load()
    if not deployment.started:
        console.print("no replicas to stop (nothing recorded under .colonnade/replicas/)")
        return
    stopped = deployment.stop()
    console.print(f"stopped: {', '.join(stopped)}" if stopped else "nothing was running any more")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    commands = parser.add_subparsers(dest="command", required=True)
    start = commands.add_parser("up", help="start the replicas, the demo backend and HAProxy")
    start.add_argument("--port", type=int, default=8765, help="the balancer's port (default 8765)")
    start.add_argument("--replicas", type=int, default=3, help="how many gateway replicas (default 3)")
    start.add_argument("--backend-port", type=int, default=8766, help="the demo backend's port")
    start.add_argument("--postgres", default=POSTGRES, help="a PostgreSQL URL to create the database with")
    start.add_argument("--database", default=DATABASE, help="the replicas' database (created if missing)")
    start.add_argument("--redis", default=REDIS, help="the Redis the replicas share")
    start.add_argument("--fresh", action="store_true", help="drop the database first")
    commands.add_parser("down", help="stop what `up` started")
    keys = commands.add_parser("keys", help="make the shared audit and approval keys in a folder")
    keys.add_argument("folder", type=Path, help="where audit.key and approval-signing.jwk are made")
    args = parser.parse_args(argv)
    if args.command == "up" and not 1 <= args.replicas <= 16:
        parser.error("--replicas must be between 1 and 16")
    try:
        if args.command == "up":
            up(args)
        elif args.command == "keys":
            made = prepare_shared_keys(args.folder)
            console.print(f"shared keys (kept if they were there): {made[0]} and {made[1]}")
        else:
            down()
    except ReplicasError as exc:
        console.print(f"[red]error:[/red] {exc}", soft_wrap=True)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
