"""`colonnade keys create | list | rotate | revoke | rotate-signing`: API keys, on the configured database,
and the gateway's own signing keys.

A new key is printed once; only its hash is stored. Rotation prints the successor and keeps the
old key valid for `auth.api_key_rotation_overlap_s` (default one day), so clients can switch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from colonnade.cli._governance import OPERATOR, run_governance
from colonnade.cli.common import console, demo_store_hint, err_console, fail, settings_of

if TYPE_CHECKING:
    from colonnade.governance.key_admin import IssuedKey
    from colonnade.runtime.governance import Governance
    from colonnade.store.api_keys_repo import ApiKeyRecord

__all__ = ["cli", "keys_app"]

cli = typer.Typer()
"""What this module adds to its parent group; `colonnade.cli.root` lists it and loads it on first use."""

keys_app = typer.Typer(help="Create, list, rotate and revoke API keys.", no_args_is_help=True)
cli.add_typer(keys_app, name="keys")


@keys_app.command("create")
def create(
    ctx: typer.Context,
    owner: Annotated[
        str, typer.Option(help="Bare user id the key acts as (ci-bot: user:ci-bot).", show_default=False)
    ],
    persona: Annotated[
        str, typer.Option(help="admin, product_owner, developer, consumer or security.", show_default=False)
    ],
    tenant: Annotated[str | None, typer.Option(help="Tenant of the key (required unless admin).")] = None,
    team: Annotated[
        str | None, typer.Option(help="Team (owner of APIs) for product owners and developers.")
    ] = None,
    scope: Annotated[
        list[str] | None,
        typer.Option("--scope", help="A scope to grant (repeatable; default: the persona's)."),
    ] = None,
    expires_in_days: Annotated[int | None, typer.Option(min=1, max=400, help="Lifetime in days.")] = None,
    label: Annotated[str | None, typer.Option(help="A note for people (what the key is for).")] = None,
) -> None:
    """Create an API key and print it once (it is stored only as a hash).

    Example: colonnade keys create --owner ci-bot --persona consumer --tenant acme --expires-in-days 90
    """
    from colonnade.governance.key_admin import KeyRequest

    request = KeyRequest(
        owner=owner,
        persona=persona,
        tenant=tenant,
        team=team,
        scopes=tuple(scope) if scope else None,
        expires_in_s=expires_in_days * 86_400 if expires_in_days else None,
        label=label,
    )

    async def work(governance: Governance) -> IssuedKey:
        assert governance.key_admin is not None
        return await governance.key_admin.create(OPERATOR, request)

    _print_issued(run_governance(settings_of(ctx), work), "created")
    _warn_without_team(persona, team)


def _warn_without_team(persona: str, team: str | None) -> None:
    """A product owner's or developer's key without a team sees no API: say so while it can be fixed."""
    from colonnade.governance.personas import persona_of
    from colonnade.governance.reach import TEAM_BOUND

    known = persona_of(persona)
    if team is None and known is not None and known in TEAM_BOUND:
        err_console.print(
            f"[yellow]warning:[/yellow] a {persona} sees only the APIs its team owns (the contracts'"
            " `owner`), and this key has no team: it sees no tools, and its calls are answered"
            " I-REQ-UNKNOWN-TOOL. Revoke it and create it again with --team TEAM.",
            soft_wrap=True,
        )


@keys_app.command("list")
def list_keys(ctx: typer.Context) -> None:
    """List API keys (ids, owners, personas, scopes, expiry, last use; never secrets).

    Example: colonnade keys list
    """

    async def work(governance: Governance) -> list[ApiKeyRecord]:
        assert governance.key_admin is not None
        return await governance.key_admin.list(OPERATOR)

    settings = settings_of(ctx)
    keys = run_governance(settings, work)
    if not keys:
        console.print("no API keys yet; create one with `colonnade keys create`" + demo_store_hint(settings))
        return
    table = Table("id", "owner", "tenant", "persona", "scopes", "expires (UTC)", "last used (UTC)", "state")
    for key in keys:
        state = (
            "revoked"
            if key.revoked_at
            else (f"rotated to {key.replaced_by}" if key.replaced_by else "active")
        )
        table.add_row(
            key.id,
            key.owner,
            key.tenant or "(all)",
            key.persona,
            "\n".join(key.scopes),
            _when(key.expires_at),
            _when(key.last_used_at),
            state,
        )
    console.print(table)


@keys_app.command("rotate")
def rotate(
    ctx: typer.Context,
    key_id: Annotated[str, typer.Argument(help="Id of the key to replace.", show_default=False)],
) -> None:
    """Make a successor of a key (printed once); the old key stays valid for the rotation overlap.

    Example: colonnade keys rotate 3f9a0c1b2d4e
    """

    async def work(governance: Governance) -> IssuedKey:
        assert governance.key_admin is not None
        return await governance.key_admin.rotate(OPERATOR, key_id)

    _print_issued(run_governance(settings_of(ctx), work), f"rotated {key_id} to")


@keys_app.command("revoke")
def revoke(
    ctx: typer.Context,
    key_id: Annotated[str, typer.Argument(help="Id of the key to revoke.", show_default=False)],
) -> None:
    """Revoke a key at once (running gateways stop accepting it within auth.api_key_cache_s).

    Example: colonnade keys revoke 3f9a0c1b2d4e
    """

    async def work(governance: Governance) -> ApiKeyRecord:
        assert governance.key_admin is not None
        return await governance.key_admin.revoke(OPERATOR, key_id)

    record = run_governance(settings_of(ctx), work)
    console.print(f"revoked {record.id} (owner {record.owner})")


@keys_app.command("rotate-signing")
def rotate_signing(
    ctx: typer.Context,
    which: Annotated[
        str, typer.Option(help="approvals (approval tokens), dev-issuer (development tokens) or all.")
    ] = "all",
) -> None:
    """Rotate the gateway's signing keys: a new key id signs from now on, the previous key still
    verifies for vault.signing_overlap_s, and both are in the published public keys (JWKS).

    Example: colonnade keys rotate-signing --which approvals
    """
    from colonnade.governance.audit import AuditEvent, EventKind
    from colonnade.governance.identity.dev_issuer import KEY_FILE as DEV_KEY_FILE
    from colonnade.runtime.governance import approval_signer

    if which not in {"approvals", "dev-issuer", "all"}:
        fail(f"--which is approvals, dev-issuer or all, not {which!r}")
    settings = settings_of(ctx)
    overlap = settings.vault.signing_overlap_s
    files = []
    if which in {"approvals", "all"}:
        files.append(("approvals", approval_signer(settings).keys_file))
    if which in {"dev-issuer", "all"}:
        from colonnade.governance.identity.signing_keys import SigningKeyFile

        files.append(("dev-issuer", SigningKeyFile(settings.data_dir / DEV_KEY_FILE, overlap_s=overlap)))

    async def work(governance: Governance) -> list[tuple[str, str, str]]:
        rotated = []
        for purpose, keys in files:
            before, after = keys.rotate()
            old, new = str(before.current.kid), str(after.current.kid)
            rotated.append((purpose, old, new))
            if governance.audit is not None:
                details = {"purpose": purpose, "key_id": new, "previous_key_id": old, "overlap_s": overlap}
                await governance.audit.append(
                    AuditEvent.by(OPERATOR, EventKind.SIGNING_KEY_ROTATE, details=details)
                )
        return rotated

    for purpose, old, new in run_governance(settings, work):
        console.print(f"{purpose}: signs with key {new} now; {old} verifies for {overlap:g} s more")


def _print_issued(issued: IssuedKey, verb: str) -> None:
    record = issued.record
    console.print(
        f"{verb} key {record.id} for {record.owner} ({record.persona}, tenant {record.tenant or 'all'})"
    )
    err_console.print("the key (shown once, store it now):")
    console.print(issued.token, markup=False, highlight=False, soft_wrap=True)


def _when(moment: object) -> str:
    return moment.strftime("%Y-%m-%d %H:%M") if hasattr(moment, "strftime") else "-"
