"""`colonnade audit list | verify`: read the audit log, and prove that nobody changed it.

`verify` walks the hash chain from the first record: exit 0 when it is whole (and prints the head,
to compare with a copy kept elsewhere), exit 1 with the first broken link.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer
from rich.table import Table

from colonnade.cli.common import EXIT_FINDINGS, console, demo_store_hint, fail, settings_of, store_settings
from colonnade.config import Settings

if TYPE_CHECKING:
    from colonnade.governance.audit import ChainReport
    from colonnade.store.audit_repo import AuditStore, StoredAudit

__all__ = ["audit_app", "cli"]

T = TypeVar("T")
cli = typer.Typer()
"""What this module adds to its parent group; `colonnade.cli.root` lists it and loads it on first use."""

audit_app = typer.Typer(help="Read and verify the audit log.", no_args_is_help=True)
cli.add_typer(audit_app, name="audit")


@audit_app.command("list")
def list_records(
    ctx: typer.Context,
    tenant: Annotated[str | None, typer.Option(help="Only this tenant.")] = None,
    principal: Annotated[
        str | None,
        typer.Option(help="Only this principal (e.g. user:alice; an e-mail is matched by its pseudonym)."),
    ] = None,
    tool: Annotated[str | None, typer.Option(help="Only this tool (canonical name).")] = None,
    outcome: Annotated[
        str | None, typer.Option(help="Only this outcome (success, invalid_request, refused...).")
    ] = None,
    kind: Annotated[
        str | None, typer.Option(help="Only this kind (call, auth.failure, key.create...).")
    ] = None,
    since: Annotated[
        datetime | None, typer.Option(help="From this time (UTC), e.g. 2026-11-24T08:00.")
    ] = None,
    until: Annotated[datetime | None, typer.Option(help="Before this time (UTC).")] = None,
    limit: Annotated[int, typer.Option(min=1, max=100_000, help="At most this many (the newest).")] = 50,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
) -> None:
    """List audit records, oldest first, filtered by tenant, principal, tool, outcome, kind and time.

    Example: colonnade audit list --tenant acme --outcome invalid_request --since 2026-11-24T08:00
    """
    from colonnade.governance.audit import AuditLog, parse_kind
    from colonnade.runtime.governance import audit_key
    from colonnade.store.audit_repo import AuditFilter

    if kind is not None:
        try:
            parse_kind(kind)
        except ValueError as exc:
            fail(f"--kind: {exc}")
    settings = store_settings(settings_of(ctx))

    async def query(store: AuditStore) -> list[StoredAudit]:
        # records keep a personal-looking principal as a keyed pseudonym: filter by the same stand-in
        actor = AuditLog(store, audit_key(settings)).stored_actor(principal)
        where = AuditFilter(tenant, actor, tool, outcome, kind, _utc(since), _utc(until))
        return await store.query(where, limit)

    records = _run(settings, query)
    if as_json:
        for record in records:
            console.print_json(json.dumps(_json(record)), indent=None)
        return
    if not records:
        console.print("no audit record matches" + demo_store_hint(settings))
        return
    table = Table("seq", "at (UTC)", "kind", "principal", "tenant", "tool", "decision", "outcome", "code")
    for record in records:
        table.add_row(
            str(record.seq),
            record.at.strftime("%Y-%m-%d %H:%M:%S"),
            record.kind,
            record.actor or "-",
            record.tenant or "-",
            record.tool or "-",
            record.decision or "-",
            record.outcome or "-",
            record.code or "-",
        )
    console.print(table)


@audit_app.command("verify")
def verify(ctx: typer.Context) -> None:
    """Check the whole hash chain; exit 1 with the first broken link (a change, a gap or an insert).

    Example: colonnade audit verify
    """
    from colonnade.governance.audit import verify_chain

    settings = store_settings(settings_of(ctx))
    report: ChainReport = _run(settings, verify_chain)  # the chain of the configured database
    if report.broken is not None:
        console.print(f"[red]broken[/red] at record {report.broken.seq}: {report.broken.problem}")
        console.print(f"{report.records} records before it are intact")
        raise typer.Exit(EXIT_FINDINGS)
    hint = demo_store_hint(settings) if not report.records else ""
    console.print(f"intact: {report.records} records; head {report.head_seq} {report.head_hash}{hint}")


def _run(settings: Settings, work: Callable[[AuditStore], Awaitable[T]]) -> T:
    from colonnade.cli.database_problem import DATABASE_ERRORS, database_problem
    from colonnade.store import create_store_engine, migrate_engine
    from colonnade.store.audit_repo import AuditStore

    async def main() -> T:
        engine = create_store_engine(settings.effective_database_url)
        store = AuditStore(engine)
        try:
            await migrate_engine(engine)
            return await work(store)
        finally:
            await store.aclose()
            await engine.dispose()

    try:
        return asyncio.run(main())
    except DATABASE_ERRORS as exc:
        fail(database_problem(settings, exc))


def _utc(moment: datetime | None) -> datetime | None:
    if moment is None:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _json(record: StoredAudit) -> dict[str, object]:
    fields = record.fields()
    fields["at"] = record.at.isoformat()
    return fields
