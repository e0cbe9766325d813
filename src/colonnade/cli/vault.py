"""`colonnade secrets set | rotate | list | delete | key-ring`: stored secrets, on the configured database.

A value is read from a file (`--from-file`), from stdin when it is piped, else asked for without
echo; it is sealed before it is stored and never printed. `rotate` keeps the previous version
verifying for `vault.rotation_overlap_s` while upstream calls send the new one.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from colonnade.cli._governance import OPERATOR, run_governance
from colonnade.cli.common import console, demo_store_hint, fail, settings_of

if TYPE_CHECKING:
    from colonnade.governance.secrets import SecretAdmin, SecretView
    from colonnade.runtime.governance import Governance

__all__ = ["cli", "secrets_app"]

cli = typer.Typer()
"""What this module adds to its parent group; `colonnade.cli.root` lists it and loads it on first use."""

secrets_app = typer.Typer(
    help="Stored secrets (sealed, per tenant) and their rotation.", no_args_is_help=True
)
cli.add_typer(secrets_app, name="secrets")
key_ring_app = typer.Typer(help="The key ring that seals stored secrets.", no_args_is_help=True)
secrets_app.add_typer(key_ring_app, name="key-ring")

_NAME_HELP = "The secret's name, as contracts and servers reference it (store:NAME)."
_TENANT_HELP = "The tenant whose backends and servers get it (default: the gateway's own, for all)."
_FILE_HELP = "Read the value from this file (default: stdin when piped, else a hidden prompt)."


def _admin(governance: Governance) -> SecretAdmin:
    assert governance.secret_admin is not None  # the CLI always has a database
    return governance.secret_admin


def _value(from_file: Path | None) -> str:
    """The value to store: never from the command line, where shell history and `ps` would keep it."""
    if from_file is not None:
        try:
            return from_file.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            fail(f"cannot read the value from {from_file}: {getattr(exc, 'strerror', None) or exc}")
    if not sys.stdin.isatty():
        return sys.stdin.read().strip()
    return str(typer.prompt("value", hide_input=True, confirmation_prompt=True)).strip()


@secrets_app.command("set")
def set_secret(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help=_NAME_HELP, show_default=False)],
    tenant: Annotated[str | None, typer.Option(help=_TENANT_HELP)] = None,
    from_file: Annotated[Path | None, typer.Option(help=_FILE_HELP)] = None,
) -> None:
    """Store a secret, replacing every earlier version at once (use `rotate` to keep an overlap).

    Example: printf %s "$CRM_TOKEN" | colonnade secrets set crm-token --tenant acme
    """
    value = _value(from_file)

    async def work(governance: Governance) -> SecretView:
        return await _admin(governance).set(OPERATOR, name, value, tenant=tenant)

    view = run_governance(settings_of(ctx), work)
    console.print(f"set {view.name} version {view.version} ({_scope(view.tenant)}); the value is not shown")


@secrets_app.command("rotate")
def rotate_secret(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help=_NAME_HELP, show_default=False)],
    tenant: Annotated[str | None, typer.Option(help=_TENANT_HELP)] = None,
    from_file: Annotated[Path | None, typer.Option(help=_FILE_HELP)] = None,
    overlap_s: Annotated[
        float | None,
        typer.Option(
            min=0, help="How long the previous value still verifies (default vault.rotation_overlap_s)."
        ),
    ] = None,
) -> None:
    """Store a new version: upstream calls send it from now on, the previous one verifies for the overlap.

    Example: colonnade secrets rotate crm-token --tenant acme --from-file new-token.txt --overlap-s 3600
    """
    value = _value(from_file)

    async def work(governance: Governance) -> SecretView:
        return await _admin(governance).rotate(OPERATOR, name, value, tenant=tenant, overlap_s=overlap_s)

    view = run_governance(settings_of(ctx), work)
    console.print(
        f"rotated {view.name} to version {view.version} ({_scope(view.tenant)}); "
        "the previous version verifies until the overlap ends"
    )


@secrets_app.command("list")
def list_secrets(
    ctx: typer.Context,
    tenant: Annotated[str | None, typer.Option(help="Only this tenant's secrets.")] = None,
) -> None:
    """List stored secrets and their kept versions (names, scopes, versions, key ids; never values).

    Example: colonnade secrets list --tenant acme
    """

    async def work(governance: Governance) -> list[SecretView]:
        return await _admin(governance).list(OPERATOR, tenant)

    settings = settings_of(ctx)
    views = run_governance(settings, work)
    if not views:
        console.print(
            "no stored secrets yet; store one with `colonnade secrets set`" + demo_store_hint(settings)
        )
        return
    table = Table("name", "tenant", "version", "state", "sealing key", "created (UTC)", "by")
    for view in views:
        state = "current" if view.current else f"previous, verifies until {_when(view.valid_until)}"
        table.add_row(
            view.name,
            view.tenant or "(all)",
            str(view.version),
            state,
            view.key_id,
            _when(view.created_at),
            view.created_by,
        )
    console.print(table)


@secrets_app.command("delete")
def delete_secret(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help=_NAME_HELP, show_default=False)],
    tenant: Annotated[str | None, typer.Option(help=_TENANT_HELP)] = None,
) -> None:
    """Delete every version of a stored secret (running gateways stop sending it within vault.cache_s).

    Example: colonnade secrets delete crm-token --tenant acme
    """

    async def work(governance: Governance) -> int:
        return await _admin(governance).delete(OPERATOR, name, tenant=tenant)

    removed = run_governance(settings_of(ctx), work)
    console.print(f"deleted {name} ({removed} version{'s' if removed != 1 else ''})")


@key_ring_app.command("new")
def new_key_ring() -> None:
    """Print a new sealing key ring (JSON) for a KMS or secret manager to hold (vault.key_ring_env/_file).

    Example: colonnade secrets key-ring new > /run/colonnade/seal-keys.json
    """
    from colonnade.store.sealing import Sealer

    console.print(Sealer.generate().to_json(), markup=False, highlight=False, soft_wrap=True)


@key_ring_app.command("rotate")
def rotate_key_ring(ctx: typer.Context) -> None:
    """Add a new current sealing key (older keys stay, so all sealed values still open) and re-seal
    every stored secret with it.

    Example: colonnade secrets key-ring rotate
    """
    from colonnade.runtime.governance import sealer
    from colonnade.store.sealing import KEY_RING_FILE, write_key_ring

    settings = settings_of(ctx)
    vault = settings.vault
    if vault.key_ring_env:
        fail(
            f"the key ring comes from the environment variable {vault.key_ring_env}: add a key where it is "
            "kept (a ring's JSON lists keys and names the current one), then restart the gateway"
        )
    path = vault.key_ring_file or settings.data_dir / KEY_RING_FILE
    rotated = sealer(settings).rotated()

    async def work(governance: Governance) -> int:
        write_key_ring(path, rotated)
        return await _admin(governance).reseal(OPERATOR, rotated)

    resealed = run_governance(settings, work)
    console.print(
        f"the key ring at {path} now seals with key {rotated.current}; re-sealed {resealed} stored "
        "version(s). Restart the gateways (or give them the new ring) so they seal with it too."
    )


def _scope(tenant: str | None) -> str:
    return f"tenant {tenant}" if tenant is not None else "the gateway's own, for every tenant"


def _when(moment: object) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S") if hasattr(moment, "strftime") else "-"
