"""`colonnade usage export`: routing turns and calls as JSONL, for offline evaluation and fine-tuning.

Two kinds of line, newest first within each kind. A `routing` line is one routed listing: what
the session asked (`request`), the tools the listing showed and the calls then made with their
outcome. A `call` line is one call from the audit log: who, which tool, its outcome, code and
duration. Redaction is the gateway's: what a session asked was scrubbed when it was kept, the
audit log keeps arguments only as a keyed hash and personal-looking principals as pseudonyms, and
every string is scrubbed once more on its way out (credentials, e-mail addresses, card numbers).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TextIO

import typer
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from colonnade.cli.common import console, err_console, fail, settings_of, store_settings
from colonnade.config import Settings

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

    from colonnade.observability.routing_turns import RoutingTurn
    from colonnade.store.audit_repo import StoredAudit

__all__ = ["cli", "export"]

cli = typer.Typer()
"""What this module adds to its parent group; `colonnade.cli.root` lists it and loads it on first use."""

_PAGE = 1000


@cli.command("export")
def export(
    ctx: typer.Context,
    out: Annotated[Path, typer.Option("--out", help="The JSONL file to write (replaced if it exists).")],
    since: Annotated[
        datetime | None,
        typer.Option(help="Only what happened from this time on (UTC), e.g. 2026-12-01T00:00."),
    ] = None,
    tenant: Annotated[str | None, typer.Option(help="Only this tenant's sessions and calls.")] = None,
) -> None:
    """Write routing turns and calls as JSONL (request, tools shown and called, outcome) redacted.

    Example: colonnade usage export --out usage.jsonl --since 2026-12-01T00:00 --tenant acme
    """
    settings = store_settings(settings_of(ctx))
    moment = since if since is None or since.tzinfo is not None else since.replace(tzinfo=UTC)
    if out.is_dir():
        fail(f"--out {out} is a directory: give a file name, e.g. {out / 'usage.jsonl'}")
    part = out.with_name(out.name + ".part")  # renamed to `out` once complete
    try:
        handle = part.open("w", encoding="utf-8")
    except OSError as exc:
        fail(f"cannot write {out}: {exc.strerror or exc}")
    columns = (TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed} lines"))
    try:
        with handle, Progress(*columns, TimeElapsedColumn(), console=err_console, transient=True) as progress:
            task = progress.add_task("exporting", total=None)
            counts = _run(settings, handle, moment, tenant, lambda n: progress.advance(task, n))
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    part.replace(out)
    console.print(f"wrote {counts[0]} routing turns and {counts[1]} calls to {out}")


def _run(
    settings: Settings,
    handle: TextIO,
    since: datetime | None,
    tenant: str | None,
    advance: Callable[[int], None],
) -> tuple[int, int]:
    from colonnade.cli.database_problem import DATABASE_ERRORS, database_problem
    from colonnade.store import create_store_engine, migrate_engine

    async def main() -> tuple[int, int]:
        engine = create_store_engine(settings.effective_database_url)
        try:
            await migrate_engine(engine)
            turns = await _turns(engine, handle, since, tenant, advance)
            calls = await _calls(engine, handle, since, tenant, advance)
            return turns, calls
        finally:
            await engine.dispose()

    try:
        return asyncio.run(main())
    except DATABASE_ERRORS as exc:
        fail(database_problem(settings, exc))


async def _turns(
    engine: AsyncEngine,
    handle: TextIO,
    since: datetime | None,
    tenant: str | None,
    advance: Callable[[int], None],
) -> int:
    from colonnade.store.routing_turns_repo import RoutingTurnStore

    store, written, before = RoutingTurnStore(engine), 0, None
    while True:
        page = await store.recent(tenant=tenant, since=since, until=before, limit=_PAGE)
        for turn in page:
            _write(handle, _turn_line(turn))
        written += len(page)
        advance(len(page))
        if len(page) < _PAGE:
            return written
        before = page[-1].at


async def _calls(
    engine: AsyncEngine,
    handle: TextIO,
    since: datetime | None,
    tenant: str | None,
    advance: Callable[[int], None],
) -> int:
    from colonnade.store.audit_repo import AuditFilter, AuditStore

    store, written, before = AuditStore(engine), 0, None
    try:
        while True:
            where = AuditFilter(tenant=tenant, kind="call", since=since, before_seq=before)
            page = await store.query(where, _PAGE)  # oldest first: written newest first
            for record in reversed(page):
                _write(handle, _call_line(record))
            written += len(page)
            advance(len(page))
            if len(page) < _PAGE:
                return written
            before = page[0].seq
    finally:
        await store.aclose()


def _turn_line(turn: RoutingTurn) -> dict[str, Any]:
    return {
        "type": "routing",
        "at": turn.at.isoformat(),
        "session": turn.session,
        "consumer": turn.consumer,
        "tenant": turn.tenant,
        "request": turn.query,
        "tools_shown": list(turn.shown),
        "tools_called": [
            {
                "tool": call.tool,
                "outcome": call.outcome,
                "shown": call.tool in turn.shown,
                "at": call.at.isoformat(),
            }
            for call in turn.calls
        ],
        "confidence": turn.confidence,
        "fallback": turn.fallback,
    }


def _call_line(record: StoredAudit) -> dict[str, Any]:
    return {
        "type": "call",
        "at": record.at.isoformat(),
        "consumer": record.actor,
        "tenant": record.tenant,
        "tool": record.tool,
        "outcome": record.outcome,
        "code": record.code,
        "duration_ms": record.details.get("duration_ms"),
        "args_hash": record.args_hash,
        "call_id": record.call_id,
        "trace_id": record.trace_id,
    }


def _write(handle: TextIO, line: dict[str, Any]) -> None:
    from colonnade.observability.redaction import scrub

    handle.write(json.dumps(scrub(line), ensure_ascii=False, sort_keys=True) + "\n")
