"""`colonnade demo` (what `make run` does): the CRM + billing demo backend and a gateway serving it.

Next to the HTTP-backed contracts the gateway serves the vault organ (examples/organs/vault: blobs
in SQLite, imported on its first call) and the demo pathways, so a client sees HTTP-backed and
in-process tools side by side, governed alike.

The demo owns `<data_dir>/demo/` and starts its contract store afresh on every run: its contracts
are regenerated for the chosen backend port, and a store kept from an earlier run would refuse
them as a changed published version. The gateway's port follows the configuration like `serve`;
both ports are checked before anything starts, so a busy one stops the demo with one line
instead of a bind error scrolling by while the gateway talks to whatever holds the port.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import typer
import yaml

from colonnade.cli.common import DEMO_DIR, DEMO_TOKEN_FILE, DemoAddress, fail, settings_of
from colonnade.cli.serve import PORT_HINT, require_free_port, with_overrides
from colonnade.config import OrganSettings, Settings

__all__ = ["DEMO_APPROVER_TOKEN_FILE", "DEMO_BACKEND_PORT", "cli", "demo"]

REPO_ROOT = Path(__file__).resolve().parents[3]
DEMO_CONTRACTS = REPO_ROOT / "examples" / "contracts"
DEMO_ORGAN_CARDS = REPO_ROOT / "examples" / "organs" / "vault" / "cards"
DEMO_PATHWAYS = REPO_ROOT / "examples" / "organs" / "pathways.yaml"
DEMO_TENANT = "acme"
DEMO_BACKEND_PORT = 8766
DEMO_APPROVER_TOKEN_FILE = "demo-approver-token"
"""A second admin of the demo's tenant: approves what the first one asks (four-eyes)."""
_BACKEND_HINT = "choose another with --backend-port (make run BACKEND_PORT=...)"
_DEMO_TOKEN_TTL_S = 12 * 3600
_SQLITE_SUFFIXES = ("", "-journal", "-wal", "-shm")
_STORE_FILES = tuple(f"colonnade.db{suffix}" for suffix in _SQLITE_SUFFIXES)
_RECORD_FILES = tuple(f"demo_backend.db{suffix}" for suffix in _SQLITE_SUFFIXES)
_RECORD_FOLDERS = ("vault",)  # the vault organ's blobs (OrganHost.folder_for)


cli = typer.Typer()
"""What this module adds to its parent group; `colonnade.cli.root` lists it and loads it on first use."""


@cli.command()
def demo(
    ctx: typer.Context,
    port: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=65535,
            help="Gateway port, 1-65535 (default from config: server.port or COLONNADE_SERVER__PORT,"
            " else 8765).",
        ),
    ] = None,
    backend_port: Annotated[
        int, typer.Option(min=1, max=65535, help="Port of the demo backend.")
    ] = DEMO_BACKEND_PORT,
    keep_data: Annotated[
        bool,
        typer.Option(
            "--keep-data",
            help="Keep the demo's records (invoices, customers, vault blobs) from the last run instead of"
            " starting again from the seed.",
        ),
    ] = False,
) -> None:
    """Run the demo: the CRM + billing demo backend and the gateway with the demo contracts published.

    The vault organ (blobs in SQLite) and two pathways are served next to them as acme tools.
    State lives in DATA_DIR/demo/ and starts again from the seed on each run (a voided invoice is
    open again), unless --keep-data. Stop with Ctrl-C.
    Example: colonnade demo --port 9765 --backend-port 9766   (make run PORT=9765 BACKEND_PORT=9766)
    Example: colonnade demo --keep-data   (make run KEEP_DATA=1)
    """
    if not DEMO_CONTRACTS.is_dir():
        fail(f"demo contracts not found at {DEMO_CONTRACTS}; run `colonnade demo` from a source checkout")
    settings = with_overrides(settings_of(ctx), None, port, None)
    host, gateway_port = settings.server.host, settings.server.port
    if gateway_port == backend_port:
        fail(f"the gateway and the demo backend cannot share port {backend_port}; {PORT_HINT}")
    require_free_port(host, gateway_port)
    require_free_port("127.0.0.1", backend_port, _BACKEND_HINT)
    token_dir = settings.data_dir  # where the client commands look for the demo's token
    demo_dir = _fresh_demo_dir(settings.data_dir / DEMO_DIR, keep_data=keep_data)
    settings = settings.model_copy(
        update={
            "data_dir": demo_dir,
            "database_url": None,  # the demo's own embedded store, whatever the configured one
            "contracts": [*settings.contracts, _demo_contracts(demo_dir, backend_port)],
            "organs": _demo_organs(settings),
        }
    )
    # Requests need a credential, as in production: the demo trusts a development issuer and mints
    # an admin token, which the client commands (smoke, tools list) find in data_dir/demo-token, and
    # a second admin's token (data_dir/demo-approver-token): four-eyes needs another person to approve
    # what the first one asks (e.g. voiding an invoice).
    settings = settings.model_copy(update={"auth": settings.auth.model_copy(update={"dev_issuer": True})})
    token = _demo_token(settings, token_dir)
    _demo_token(settings, token_dir, subject="demo-approver", file_name=DEMO_APPROVER_TOKEN_FILE)
    from colonnade.observability.logging import configure_logging

    configure_logging(settings.log_level)
    with _demo_backend(demo_dir, backend_port), _address_written(settings, token_dir):
        from colonnade.cli import _launch

        _launch.run(_launch.run_http(settings, banner=True, snippet=True, token=token))


@contextlib.contextmanager
def _address_written(settings: Settings, token_dir: Path) -> Iterator[None]:
    """token_dir/demo.json while the demo runs: its address and store, for the commands run here
    (`colonnade status`, `keys list`, `smoke` after `make run PORT=9765`)."""
    address = DemoAddress(settings.server.base_url, settings.data_dir.resolve(), os.getpid())
    try:
        path = address.write(token_dir)
    except OSError as exc:
        fail(f"cannot write the demo's address beside its token in {token_dir}: {exc.strerror or exc}")
    try:
        yield
    finally:
        path.unlink(missing_ok=True)


def _demo_token(
    settings: Settings, token_dir: Path, *, subject: str = "demo-admin", file_name: str = DEMO_TOKEN_FILE
) -> str:
    """An admin token of tenant acme from the development issuer, also written to token_dir/file_name."""
    from colonnade.cli.token import write_secret
    from colonnade.governance.identity.dev_issuer import DevIssuer
    from colonnade.governance.identity.exposure import AuthConfigError, resource_url
    from colonnade.governance.personas import PERSONA_SCOPES, Persona

    try:
        audience = resource_url(settings)
    except AuthConfigError as exc:
        fail(str(exc))
    claims = {
        "sub": subject,
        "persona": Persona.ADMIN.value,
        "tenant": "acme",
        "scope": " ".join(sorted(PERSONA_SCOPES[Persona.ADMIN])),
    }
    token = DevIssuer.load_or_create(settings.data_dir).mint(
        claims, audience=audience, ttl_s=_DEMO_TOKEN_TTL_S
    )
    token_dir.mkdir(parents=True, exist_ok=True)
    write_secret(token_dir / file_name, token)
    return token


def _demo_organs(settings: Settings) -> OrganSettings:
    """The configured organs plus the vault organ and the demo pathways, under the demo's tenant."""
    organs = settings.organs
    return organs.model_copy(
        update={
            "tenant": DEMO_TENANT,
            "cards": [*organs.cards, DEMO_ORGAN_CARDS],
            "import_paths": [*organs.import_paths, REPO_ROOT],
            "pathways": [*organs.pathways, DEMO_PATHWAYS],
        }
    )


def _fresh_demo_dir(demo_dir: Path, *, keep_data: bool = False) -> Path:
    """The demo's folder with no contract store or routing index left from an earlier run, and
    unless `keep_data` none of the records the documented walkthroughs change (a voided invoice)."""
    files, folders = _STORE_FILES, ["routing"]
    if not keep_data:
        files, folders = (*files, *_RECORD_FILES), [*folders, *_RECORD_FOLDERS]
    try:
        demo_dir.mkdir(parents=True, exist_ok=True)
        for name in files:
            (demo_dir / name).unlink(missing_ok=True)
        for name in folders:
            shutil.rmtree(demo_dir / name, ignore_errors=True)
    except OSError as exc:
        fail(f"cannot prepare the demo's folder {demo_dir}: {exc.strerror or exc}; check data_dir")
    return demo_dir


def _demo_contracts(demo_dir: Path, backend_port: int) -> Path:
    """The bundled contracts, pointed at the demo backend's port when it is not the default."""
    if backend_port == DEMO_BACKEND_PORT:
        return DEMO_CONTRACTS
    target = demo_dir / "contracts"
    target.mkdir(parents=True, exist_ok=True)
    for stale in target.glob("*.yaml"):
        stale.unlink()
    for src in sorted(DEMO_CONTRACTS.glob("*.yaml")):
        data = yaml.safe_load(src.read_text(encoding="utf-8"))
        data["backend"]["base_url"] = f"http://127.0.0.1:{backend_port}"
        (target / src.name).write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return target


@contextlib.contextmanager
def _demo_backend(demo_dir: Path, port: int) -> Iterator[None]:
    """The demo backend as a child process (its output in a log file), stopped when the gateway stops."""
    db = (demo_dir / "demo_backend.db").resolve()
    log = demo_dir / "demo_backend.log"
    cmd = [sys.executable, "-m", "examples.demo_backend", "--port", str(port), "--db", str(db)]
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    with log.open("wb") as sink:
        proc = subprocess.Popen(cmd, cwd=REPO_ROOT, env=env, stdout=sink, stderr=subprocess.STDOUT)
    try:
        _wait_ready(f"http://127.0.0.1:{port}/healthz", proc, log)
        yield
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def _wait_ready(url: str, proc: subprocess.Popen[bytes], log: Path, timeout_s: float = 20.0) -> None:
    """Until our backend answers; an answer while our process is dead comes from someone else."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            fail(f"the demo backend exited with code {proc.returncode}: {_last_line(log)} (log: {log})")
        try:
            with urllib.request.urlopen(url, timeout=1.0) as response:
                if response.status == 200 and proc.poll() is None:
                    return
        except OSError:
            time.sleep(0.1)
    fail(f"the demo backend did not answer at {url} within {timeout_s:.0f}s (log: {log})")


def _last_line(log: Path) -> str:
    try:
        lines = [
            line for line in log.read_text(encoding="utf-8", errors="replace").splitlines() if line.strip()
        ]
    except OSError:
        return "no output"
    return lines[-1].strip() if lines else "no output"
