"""`colonnade serve` and `colonnade demo`: run the gateway (Streamable HTTP or stdio)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import typer
import yaml

from colonnade.cli.common import DEMO_TOKEN_FILE, fail, settings_of
from colonnade.cli.root import app
from colonnade.config import Settings

__all__ = ["demo", "serve"]

REPO_ROOT = Path(__file__).resolve().parents[3]
DEMO_CONTRACTS = REPO_ROOT / "examples" / "contracts"
DEMO_BACKEND_PORT = 8766
_DEMO_TOKEN_TTL_S = 12 * 3600


@app.command()
def serve(
    ctx: typer.Context,
    host: Annotated[
        str | None, typer.Option(help="Interface to listen on (default from config: 127.0.0.1).")
    ] = None,
    port: Annotated[int | None, typer.Option(help="TCP port (default from config: 8765).")] = None,
    stdio: Annotated[
        bool, typer.Option("--stdio", help="Serve MCP over stdin/stdout instead of HTTP.")
    ] = False,
    contract: Annotated[
        list[Path] | None,
        typer.Option("--contract", "-C", help="Contract file or folder to publish at start-up (repeatable)."),
    ] = None,
) -> None:
    """Run the gateway: MCP at http://HOST:PORT/mcp plus /healthz and /readyz, or MCP over stdio.

    Example: colonnade serve --port 8765 -C examples/contracts
    """
    settings = _with_overrides(settings_of(ctx), host, port, contract)
    from colonnade.cli import _launch
    from colonnade.observability.logging import configure_logging

    configure_logging(settings.log_level)  # stderr only: in stdio mode stdout is the protocol
    if stdio:
        _launch.run(_launch.run_stdio(settings))
    else:
        _launch.run(_launch.run_http(settings, banner=True))


@app.command()
def demo(
    ctx: typer.Context,
    port: Annotated[int, typer.Option(help="Gateway port.")] = 8765,
    backend_port: Annotated[int, typer.Option(help="Demo backend port.")] = DEMO_BACKEND_PORT,
) -> None:
    """Run the demo: the CRM + billing demo backend and the gateway with the demo contracts published.

    Requests need a credential, as in production: the demo trusts the development issuer, mints an
    admin token of tenant acme, prints it with the client snippet and writes it to
    data_dir/demo-token, where `colonnade smoke` and `colonnade tools list` find it.

    Example: colonnade demo   (what `make run` does); stop with Ctrl-C.
    """
    if not DEMO_CONTRACTS.is_dir():
        fail(f"demo contracts not found at {DEMO_CONTRACTS}; run `colonnade demo` from a source checkout")
    settings = settings_of(ctx)
    contracts = _demo_contracts(settings, backend_port)
    settings = _with_overrides(settings, None, port, contracts)
    settings = settings.model_copy(update={"auth": settings.auth.model_copy(update={"dev_issuer": True})})
    token = _demo_token(settings)
    from colonnade.observability.logging import configure_logging

    configure_logging(settings.log_level)
    with _demo_backend(settings, backend_port):
        from colonnade.cli import _launch

        _launch.run(_launch.run_http(settings, banner=True, snippet=True, token=token))


def _demo_token(settings: Settings) -> str:
    """An admin token of tenant acme from the development issuer, also written to data_dir/demo-token."""
    from colonnade.cli.token import write_secret
    from colonnade.governance.identity.dev_issuer import DevIssuer
    from colonnade.governance.identity.exposure import AuthConfigError, resource_url
    from colonnade.governance.personas import PERSONA_SCOPES, Persona

    try:
        audience = resource_url(settings)
    except AuthConfigError as exc:
        fail(str(exc))
    claims = {
        "sub": "demo-admin",
        "persona": Persona.ADMIN.value,
        "tenant": "acme",
        "scope": " ".join(sorted(PERSONA_SCOPES[Persona.ADMIN])),
    }
    token = DevIssuer.load_or_create(settings.data_dir).mint(
        claims, audience=audience, ttl_s=_DEMO_TOKEN_TTL_S
    )
    write_secret(settings.data_dir / DEMO_TOKEN_FILE, token)
    return token


def _with_overrides(
    settings: Settings, host: str | None, port: int | None, contracts: list[Path] | None
) -> Settings:
    server = settings.server.model_copy(
        update={k: v for k, v in (("host", host), ("port", port)) if v is not None}
    )
    update: dict[str, object] = {"server": server}
    if contracts:
        update["contracts"] = [*settings.contracts, *contracts]
    return settings.model_copy(update=update)


def _demo_contracts(settings: Settings, backend_port: int) -> list[Path]:
    """The bundled contracts, pointed at the demo backend's port when it is not the default."""
    if backend_port == DEMO_BACKEND_PORT:
        return [DEMO_CONTRACTS]
    target = settings.data_dir / "demo-contracts"
    target.mkdir(parents=True, exist_ok=True)
    for src in sorted(DEMO_CONTRACTS.glob("*.yaml")):
        data = yaml.safe_load(src.read_text(encoding="utf-8"))
        data["backend"]["base_url"] = f"http://127.0.0.1:{backend_port}"
        (target / src.name).write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return [target]


@contextlib.contextmanager
def _demo_backend(settings: Settings, port: int) -> Iterator[None]:
    """The demo backend as a child process, stopped when the gateway stops."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    db = (settings.data_dir / "demo_backend.db").resolve()
    cmd = [sys.executable, "-m", "examples.demo_backend", "--port", str(port), "--db", str(db)]
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    proc = subprocess.Popen(cmd, cwd=REPO_ROOT, env=env)
    try:
        _wait_ready(f"http://127.0.0.1:{port}/healthz", proc)
        yield
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def _wait_ready(url: str, proc: subprocess.Popen[bytes], timeout_s: float = 20.0) -> None:
    port = url.split(":")[2].split("/")[0]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            fail(f"the demo backend exited with code {proc.returncode} (is port {port} free?)")
        try:
            with urllib.request.urlopen(url, timeout=1.0) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    fail(f"the demo backend did not answer at {url} within {timeout_s:.0f}s")
