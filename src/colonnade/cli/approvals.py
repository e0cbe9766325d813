"""`colonnade approvals list | show | approve | deny`: decide on calls awaiting approval, on the database.

The CLI reads as the gateway's operator (`system:cli`, every tenant), like `colonnade keys`; a
decision names the person deciding with `--as` (required), who is then the approver bound into the
token and the audit record (four-eyes: never the requester). Running the approved call is the
requester's (retry with the token, or `POST /v1/approvals/{id}/resume`), or
`POST /v1/approvals/{id}/approve` with `run`.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from colonnade.cli._governance import OPERATOR, run_governance
from colonnade.cli.common import console, demo_store_hint, fail, settings_of
from colonnade.governance.principal import Principal, PrincipalKind, parse_principal_key

if TYPE_CHECKING:
    from colonnade.runtime.governance import Governance
    from colonnade.store.approvals_repo import ApprovalRecord

__all__ = ["approvals_app"]

cli = typer.Typer()
"""What this module adds to its parent group; `colonnade.cli.root` lists it and loads it on first use."""

approvals_app = typer.Typer(help="List calls awaiting approval; approve or deny them.", no_args_is_help=True)
cli.add_typer(approvals_app, name="approvals")

_STATES = ("pending", "approved", "denied", "used", "expired")
_AS_HELP = (
    "Who decides (required): a user id (bob) or a principal key (user:bob, agent:ops-bot), "
    "recorded as the approver; never the requester."
)


def _actor(person: str) -> Principal:
    """The person deciding, parsed as the requester's key is, so four-eyes compares like with like.

    Always named: an operator default (system:cli) would let anyone at the CLI, the requester
    included, decide without four-eyes ever seeing who.
    """
    try:
        kind, ident = parse_principal_key(person, bare=PrincipalKind.USER)
    except ValueError as exc:
        fail(f"--as: {exc}")
    return Principal(kind, ident, persona="admin", credential="cli")


@approvals_app.command("list")
def list_approvals(
    ctx: typer.Context,
    state: Annotated[
        str | None, typer.Option(help="Only this state: pending, approved, denied, used or expired.")
    ] = "pending",
    every: Annotated[bool, typer.Option("--all", help="Every state (overrides --state).")] = False,
) -> None:
    """List approvals, newest first (by default those still pending).

    Example: colonnade approvals list --state pending
    """
    if state is not None and state not in _STATES:
        fail(f"--state is one of {', '.join(_STATES)}, not {state!r}")

    async def work(governance: Governance) -> list[ApprovalRecord]:
        assert governance.approvals is not None
        return await governance.approvals.list(OPERATOR, None if every else state)

    settings = settings_of(ctx)
    records = run_governance(settings, work)
    if not records:
        console.print("no approvals" + ("" if every else f" in state {state}") + demo_store_hint(settings))
        return
    table = Table("id", "state", "tool", "arguments", "requester", "reasons", "expires (UTC)")
    for record in records:
        table.add_row(
            record.id,
            record.state,
            record.tool,
            json.dumps(record.input, ensure_ascii=False),
            record.requester,
            "\n".join(record.reasons),
            record.expires_at.strftime("%Y-%m-%d %H:%M"),
        )
    console.print(table)


@approvals_app.command("show")
def show(
    ctx: typer.Context,
    approval_id: Annotated[str, typer.Argument(help="Id of the approval (ap_...).", show_default=False)],
) -> None:
    """Print one approval as JSON (tool, arguments, requester, reasons, decision).

    Example: colonnade approvals show ap_Xb3...
    """
    from colonnade.calls.approvals import approval_view

    async def work(governance: Governance) -> ApprovalRecord:
        assert governance.approvals is not None
        return await governance.approvals.show(OPERATOR, approval_id)

    record = run_governance(settings_of(ctx), work)
    console.print_json(json.dumps(approval_view(record)))


@approvals_app.command("approve")
def approve(
    ctx: typer.Context,
    approval_id: Annotated[str, typer.Argument(help="Id of the approval (ap_...).", show_default=False)],
    person: Annotated[str, typer.Option("--as", help=_AS_HELP, show_default=False)],
    comment: Annotated[str | None, typer.Option(help="Why (shown to the requester, audited).")] = None,
) -> None:
    """Approve a pending call: its requester may then run it once, within 5 minutes.

    Example: colonnade approvals approve ap_Xb3... --as bob --comment "checked with finance"
    """
    actor = _actor(person)

    async def work(governance: Governance) -> ApprovalRecord:
        assert governance.approvals is not None
        return await governance.approvals.approve(actor, approval_id, comment)

    record = run_governance(settings_of(ctx), work)
    expires = record.token_expires_at.isoformat() if record.token_expires_at else "-"
    console.print(
        f"approved {record.id} ({record.tool}) as {record.approver}; the requester {record.requester} "
        f"may run it once until {expires} (it reads the token with GET /v1/approvals/{record.id})"
    )


@approvals_app.command("deny")
def deny(
    ctx: typer.Context,
    approval_id: Annotated[str, typer.Argument(help="Id of the approval (ap_...).", show_default=False)],
    person: Annotated[str, typer.Option("--as", help=_AS_HELP, show_default=False)],
    comment: Annotated[str | None, typer.Option(help="Why (shown to the requester, audited).")] = None,
) -> None:
    """Deny a pending call: it never runs.

    Example: colonnade approvals deny ap_Xb3... --as bob --comment "wrong invoice"
    """
    actor = _actor(person)

    async def work(governance: Governance) -> ApprovalRecord:
        assert governance.approvals is not None
        return await governance.approvals.deny(actor, approval_id, comment)

    record = run_governance(settings_of(ctx), work)
    console.print(f"denied {record.id} ({record.tool}) as {record.approver}")
