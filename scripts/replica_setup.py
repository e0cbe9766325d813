"""What every replica of one deployment shares, made before any of them starts.

The HAProxy configuration (deploy/haproxy.cfg filled in), a replica's environment (one database, one
audit key, one approval signing key, the balancer's resource URL, Redis once the settings have
`shared_state.redis_url`), the shared keys, the database and an admin API key in it. `make replicas`
(scripts/replicas.py) and the replica tests (tests/support/replicas.py) both set replicas up with
these, so the tests run what `make replicas` runs.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import string
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = [
    "ADMIN_OWNER",
    "COLONNADE",
    "HAPROXY_TEMPLATE",
    "REDIS_SETTING",
    "ReplicasError",
    "drop_database",
    "ensure_database",
    "find_haproxy",
    "haproxy_config",
    "mint_admin_key",
    "prepare_shared_keys",
    "replica_environment",
    "settings_accept",
    "tail",
]

ROOT = Path(__file__).resolve().parents[1]
HAPROXY_TEMPLATE = ROOT / "deploy" / "haproxy.cfg"
COLONNADE = Path(sys.executable).with_name("colonnade")
REDIS_SETTING = ("shared_state", "redis_url")
ADMIN_OWNER = "replicas-admin"


class ReplicasError(Exception):
    """Something `make replicas` cannot go past: the message says what and how to fix it."""


def find_haproxy() -> str | None:
    """The haproxy executable (Debian puts it in /usr/sbin, which a user's PATH may lack)."""
    found = shutil.which("haproxy")
    if found is None and os.access("/usr/sbin/haproxy", os.X_OK):
        found = "/usr/sbin/haproxy"
    return found


def haproxy_config(
    lb_port: int,
    replica_ports: Sequence[int],
    *,
    bind_host: str = "127.0.0.1",
    check_ms: int = 500,
    max_connections: int = 4096,
    template: Path = HAPROXY_TEMPLATE,
) -> str:
    """deploy/haproxy.cfg with its fields filled in: one `server rN` line per replica."""
    servers = "\n".join(f"    server r{n} 127.0.0.1:{port}" for n, port in enumerate(replica_ports, start=1))
    fields = {
        "bind_host": bind_host,
        "lb_port": lb_port,
        "check_ms": check_ms,
        "max_connections": max_connections,
        "servers": servers,
    }
    return string.Template(template.read_text(encoding="utf-8")).substitute(fields)


def settings_accept(path: Sequence[str]) -> bool:
    """Whether the gateway's settings have the nested setting `path` (e.g. shared_state.redis_url)."""
    from pydantic import BaseModel

    from colonnade.config import Settings

    model: type[BaseModel] = Settings
    for depth, name in enumerate(path):
        field = model.model_fields.get(name)
        if field is None:
            return False
        if depth == len(path) - 1:
            return True
        annotation = field.annotation
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return False
        model = annotation
    return False


def replica_environment(
    base: Mapping[str, str],
    *,
    data_dir: Path,
    database_url: str,
    keys: tuple[Path, Path],
    contracts: Sequence[Path],
    lb_url: str,
    redis_url: str | None,
    key_prefix: str = "colonnade-replicas",
) -> dict[str, str]:
    """What one replica runs with: its own data_dir, everything else the same on every replica.

    `key_prefix` keeps this deployment's Redis keys and change channel apart from other gateways
    (and other tests) on the same Redis. The resource URL is the balancer's (the audience of OAuth
    tokens and what the protected-resource metadata names), not the replica's own address.
    """
    audit_key, approval_key = keys
    env = {
        **base,
        "COLONNADE_DATA_DIR": str(data_dir),
        "COLONNADE_DATABASE_URL": database_url,
        "COLONNADE_AUDIT__KEY_FILE": str(audit_key),
        "COLONNADE_APPROVALS__KEY_FILE": str(approval_key),
        "COLONNADE_AUTH__ENABLED": "true",
        "COLONNADE_AUTH__RESOURCE": f"{lb_url}/mcp",
        "COLONNADE_CONTRACTS": json.dumps([str(path) for path in contracts]),
    }
    if redis_url is not None and settings_accept(REDIS_SETTING):
        env["COLONNADE_SHARED_STATE__REDIS_URL"] = redis_url
        # One deployment's keys and channels apart from any other gateway on the same Redis.
        env["COLONNADE_SHARED_STATE__KEY_PREFIX"] = key_prefix
    return env


def prepare_shared_keys(keys_dir: Path) -> tuple[Path, Path]:
    """The audit key and the approval signing key every replica reads, made once if missing.

    Made by the gateway's own code, before any replica starts: replicas starting together would each
    make a key of their own, and the audit chain would not verify across them.
    """
    from colonnade.config import Settings
    from colonnade.runtime.governance import approval_signer, audit_key

    audit_file, approval_file = keys_dir / "audit.key", keys_dir / "approval-signing.jwk"
    settings = Settings.model_validate(
        {"audit": {"key_file": str(audit_file)}, "approvals": {"key_file": str(approval_file)}}
    )
    audit_key(settings)
    approval_signer(settings)
    return audit_file, approval_file


def ensure_database(server_url: str, name: str, *, fresh: bool = False) -> tuple[str, bool]:
    """The URL of database `name` on the server of `server_url`, created if missing (dropped first
    when `fresh`); also whether it was created now."""
    from sqlalchemy.engine import make_url

    created = asyncio.run(_ensure_database(server_url, name, fresh))
    return make_url(server_url).set(database=name).render_as_string(hide_password=False), created


def drop_database(server_url: str, name: str) -> None:
    asyncio.run(_admin(server_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


async def _ensure_database(server_url: str, name: str, fresh: bool) -> bool:
    if fresh:
        await _admin(server_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    exists = await _admin(server_url, f"SELECT 1 FROM pg_database WHERE datname = '{name}'")
    if exists:
        return False
    await _admin(server_url, f'CREATE DATABASE "{name}"')
    return True


async def _admin(server_url: str, statement: str) -> bool:
    """Run one statement outside a transaction (CREATE DATABASE needs that); True if it gave rows."""
    from sqlalchemy import text

    from colonnade.store import create_store_engine

    engine = create_store_engine(server_url, connect_args={"timeout": 10})
    try:
        async with engine.connect() as connection:
            autocommit = await connection.execution_options(isolation_level="AUTOCOMMIT")
            result = await autocommit.execute(text(statement))
            return bool(result.returns_rows and result.first() is not None)
    finally:
        await engine.dispose()


def mint_admin_key(env: Mapping[str, str], *, owner: str = ADMIN_OWNER, label: str = "make replicas") -> str:
    """An admin API key made with `colonnade keys create` on the replicas' database."""
    command = [str(COLONNADE), "keys", "create", "--owner", owner, "--persona", "admin", "--label", label]
    done = subprocess.run(command, env=dict(env), capture_output=True, text=True, timeout=120, check=False)
    keys = [line.strip() for line in done.stdout.splitlines() if line.strip().startswith("col_")]
    if done.returncode != 0 or not keys:
        raise ReplicasError(f"`colonnade keys create` failed ({done.returncode}): {tail(done.stderr)}")
    return keys[-1]


def tail(text: str, lines: int = 3) -> str:
    kept = [line for line in text.splitlines() if line.strip()]
    return " | ".join(kept[-lines:]) or "no output"
