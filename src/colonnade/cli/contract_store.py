"""`colonnade contract publish | list | history | deprecate`: the contract store from the command line.

Every command migrates the database first, so a fresh machine needs no setup step. Publications
and deprecations are audit records of the operator (`system:cli`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table

from colonnade.cli.common import (
    EXIT_FINDINGS,
    EXIT_USAGE,
    OutputFormat,
    console,
    err_console,
    fail,
    print_json,
    settings_of,
)
from colonnade.config import Settings
from colonnade.contracts.compatibility import ContractDiff, changed_tools, compatibility_findings
from colonnade.contracts.findings import Finding
from colonnade.contracts.load import ContractLoadError
from colonnade.contracts.model import Contract, ContractStatus
from colonnade.contracts.validate import ContractInvalid, load_contract
from colonnade.store.store_errors import ContractConflict, ContractNotFound, StoreError

if TYPE_CHECKING:  # the store (SQLAlchemy, Alembic) is loaded by the commands, not by `--help`
    from colonnade.governance.audit import AuditEvent
    from colonnade.store import ContractStore, StoredContract

__all__ = ["cli", "deprecate_command", "history_command", "list_command", "publish_command", "run_with_store"]

T = TypeVar("T")

_FORMAT = typer.Option(
    "--format", "-f", help="text (a table) for people; json for tools and CI.", case_sensitive=False
)
_STATUS_STYLE = {
    ContractStatus.DRAFT: "yellow",
    ContractStatus.PUBLISHED: "green",
    ContractStatus.DEPRECATED: "dim",
}


def run_with_store(
    settings: Settings,
    work: Callable[[ContractStore], Awaitable[T]],
    audited: Callable[[T], list[AuditEvent]] | None = None,
) -> T:
    """Open the configured database, migrate it, run `work` and append the audit events `audited`
    makes of its result; store and database errors end the command."""
    from colonnade.cli.common import store_settings

    settings = store_settings(settings)

    from colonnade.cli.database_problem import DATABASE_ERRORS, database_problem
    from colonnade.governance.audit import AuditLog
    from colonnade.runtime.governance import audit_key
    from colonnade.shared_state.announce import announce
    from colonnade.shared_state.topics import CATALOG_CHANGED
    from colonnade.store import ContractStore, create_store_engine, migrate_engine
    from colonnade.store.audit_repo import AuditStore

    async def main() -> T:
        engine = create_store_engine(settings.effective_database_url)
        try:
            await migrate_engine(engine)
            done = await work(ContractStore(engine))
            if audited is not None:
                log = AuditLog(AuditStore(engine), audit_key(settings))
                try:
                    for event in audited(done):
                        await log.append(event)
                finally:
                    await log.store.aclose()
                # A change (it was audited): running replicas sync now rather than at their next poll.
                await announce(settings.shared_state, CATALOG_CHANGED, {"by": "cli"})
            return done
        finally:
            await engine.dispose()

    try:
        return asyncio.run(main())
    except ContractNotFound as exc:
        fail(str(exc), EXIT_USAGE)
    except ContractConflict as exc:
        fail(str(exc), EXIT_FINDINGS)
    except StoreError as exc:
        fail(str(exc), EXIT_USAGE)
    except DATABASE_ERRORS as exc:
        fail(database_problem(settings, exc), EXIT_USAGE)


@dataclass(frozen=True)
class _Outcome:
    path: Path
    contract: Contract
    result: str
    stored: StoredContract | None = None
    diff: ContractDiff | None = None
    """The comparison with the version this one must stay compatible with (None for a first version)."""
    override: str | None = None
    """The reason given with --allow-breaking, when the override let a breaking change through."""


cli = typer.Typer()
"""What this module adds to its parent group; `colonnade.cli.root` lists it and loads it on first use."""


@cli.command("publish")
def publish_command(
    ctx: typer.Context,
    paths: Annotated[
        list[Path],
        typer.Argument(help="Contract files (YAML or JSON) to validate and publish.", show_default=False),
    ],
    allow_breaking: Annotated[
        bool,
        typer.Option(
            "--allow-breaking",
            help="Publish even if a version breaks callers of the previous one without a major bump "
            "(needs --reason; recorded in the audit log).",
        ),
    ] = False,
    reason: Annotated[
        str | None,
        typer.Option("--reason", help="Why the breaking change may go out under this version (audited)."),
    ] = None,
    confirm_draft: Annotated[
        bool,
        typer.Option(
            "--confirm-draft",
            help="Publish files that say `status: draft` or still list `needs_review` items (what is "
            "unreviewed is printed and recorded in the audit log).",
        ),
    ] = False,
    output: Annotated[OutputFormat, _FORMAT] = OutputFormat.TEXT,
) -> None:
    """Validate contract files and publish them to the store.

    Nothing is published unless every file is valid. A published version is immutable: to change
    a contract, bump its version; earlier versions stay in the store as history. Each new version
    is compared with the previous published one (`colonnade contract diff`): a breaking change
    needs a major version bump, or --allow-breaking with a --reason. A file that is still a draft, or
    lists `needs_review` items, needs --confirm-draft.

    Example: colonnade contract publish examples/contracts/*.yaml
    """
    override = _override(allow_breaking, reason)
    contracts = _load_valid(paths)
    unreviewed = _unreviewed(contracts)
    if unreviewed and not confirm_draft:
        for path, items in unreviewed.items():
            for item in items:
                err_console.print(f"[yellow]unreviewed:[/yellow] {path}: {item}", soft_wrap=True)
        err_console.print(
            f"nothing published: {len(unreviewed)} file(s) are drafts or list needs_review items; review "
            "them (and remove each item once done), or publish anyway with --confirm-draft",
            soft_wrap=True,
        )
        raise typer.Exit(EXIT_FINDINGS)
    settings = settings_of(ctx)
    outcomes = run_with_store(
        settings,
        lambda store: _publish_all(store, contracts, override),
        lambda done: _published_events(done, unreviewed),
    )
    if output is OutputFormat.JSON:
        print_json([_outcome_json(outcome) for outcome in outcomes])
    else:
        _print_outcomes(outcomes)
    if any(outcome.stored is None for outcome in outcomes):
        raise typer.Exit(EXIT_FINDINGS)


def _outcome_json(outcome: _Outcome) -> dict[str, object]:
    contract = outcome.contract
    return {
        "file": str(outcome.path),
        "tenant": contract.tenant,
        "api": contract.name,
        "version": contract.version,
        "endpoints": len(contract.operations()),
        "result": outcome.result,
        "published": outcome.stored is not None,
        "compatibility": outcome.diff.to_dict() if outcome.diff is not None else None,
        "allowed_breaking": outcome.override,
    }


def _override(allow_breaking: bool, reason: str | None) -> str | None:
    """The audited reason of an override; --allow-breaking without a reason is a usage error."""
    if not allow_breaking:
        if reason is not None:
            fail("--reason goes with --allow-breaking: say why a breaking change may go out", EXIT_USAGE)
        return None
    if reason is None or not reason.strip():
        fail(
            "--allow-breaking needs --reason '...': the audit log records why callers of the previous "
            "version may break",
            EXIT_USAGE,
        )
    return reason.strip()


def _print_outcomes(outcomes: list[_Outcome]) -> None:
    table = Table("file", "contract", "version", "endpoints", "result", title="Published contracts")
    for outcome in outcomes:
        endpoints = str(len(outcome.contract.operations()))
        style = "red" if outcome.stored is None else "green"
        table.add_row(
            str(outcome.path),
            f"{outcome.contract.tenant}/{outcome.contract.name}",
            outcome.contract.version,
            endpoints,
            f"[{style}]{outcome.result}[/{style}]",
        )
    console.print(table)


@cli.command("list")
def list_command(
    ctx: typer.Context,
    tenant: Annotated[
        str | None, typer.Option("--tenant", "-t", help="Only this tenant's contracts.")
    ] = None,
    status: Annotated[
        ContractStatus | None, typer.Option("--status", "-s", help="Only versions with this status.")
    ] = None,
    output: Annotated[OutputFormat, _FORMAT] = OutputFormat.TEXT,
) -> None:
    """List stored contract versions, by tenant and API, newest version first.

    Example: colonnade contract list --status published --format json
    """
    stored = run_with_store(settings_of(ctx), lambda store: store.list(tenant=tenant, status=status))
    if output is OutputFormat.JSON:
        print_json([_stored_json(item) for item in stored])
        return
    if not stored:
        filters = [f"{key} {value}" for key, value in (("tenant", tenant), ("status", status)) if value]
        if filters:
            console.print(f"no stored contract matches {' and '.join(filters)}")
        else:
            console.print("no contracts stored yet; publish one with `colonnade contract publish FILE`")
        return
    table = Table("tenant", "api", "version", "status", "spec", "updated (UTC)")
    for item in stored:
        table.add_row(
            item.tenant,
            item.name,
            item.version,
            _status(item.status),
            item.spec_hash[:12],
            _when(item.updated_at),
        )
    console.print(table)


@cli.command("history")
def history_command(
    ctx: typer.Context,
    tenant: Annotated[str, typer.Argument(help="Tenant that owns the API.", show_default=False)],
    name: Annotated[str, typer.Argument(help="API name (the contract's `name`).", show_default=False)],
    output: Annotated[OutputFormat, _FORMAT] = OutputFormat.TEXT,
) -> None:
    """Show every stored version of one API, newest first.

    Example: colonnade contract history acme crm --format json
    """
    versions = run_with_store(settings_of(ctx), lambda store: store.history(tenant, name))
    if not versions:
        fail(f"no contract {tenant}/{name} in the store; check `colonnade contract list` for the names")
    if output is OutputFormat.JSON:
        print_json([_stored_json(item) for item in versions])
        return
    table = Table("version", "status", "spec", "created (UTC)", "updated (UTC)", title=f"{tenant}/{name}")
    for item in versions:
        table.add_row(
            item.version,
            _status(item.status),
            item.spec_hash[:12],
            _when(item.created_at),
            _when(item.updated_at),
        )
    console.print(table)


@cli.command("deprecate")
def deprecate_command(
    ctx: typer.Context,
    tenant: Annotated[str, typer.Argument(help="Tenant that owns the API.", show_default=False)],
    name: Annotated[str, typer.Argument(help="API name (the contract's `name`).", show_default=False)],
    version: Annotated[str, typer.Argument(help="Version to deprecate, e.g. 1.2.0.", show_default=False)],
    sunset: Annotated[
        datetime | None,
        typer.Option(
            "--sunset",
            help="From then on calls pinned to this version are refused (C-CONTRACT-SUNSET); "
            "UTC unless the time says otherwise.",
            formats=["%Y-%m-%d", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M:%S%z"],
            show_default=False,
        ),
    ] = None,
    successor: Annotated[
        str | None,
        typer.Option("--successor", help="The later version callers should move to.", show_default=False),
    ] = None,
) -> None:
    """Mark a published version deprecated; it stays in the store as history.

    Callers that pin the version still reach it, with a deprecation warning in each result, until
    its --sunset; then they are refused with an error naming the --successor.

    Example: colonnade contract deprecate acme crm 1.0.0 --sunset 2027-03-31 --successor 2.0.0
    """
    sunset_at = sunset.replace(tzinfo=UTC) if sunset is not None and sunset.tzinfo is None else sunset

    async def work(store: ContractStore) -> tuple[StoredContract, StoredContract | None]:
        deprecated = await store.deprecate(tenant, name, version, sunset_at=sunset_at, successor=successor)
        try:
            return deprecated, await store.get(tenant, name)
        except ContractNotFound:
            return deprecated, None

    def audited(done: tuple[StoredContract, StoredContract | None]) -> list[AuditEvent]:
        return [_event("contract.deprecate", done[0])]

    deprecated, latest = run_with_store(settings_of(ctx), work, audited)
    notice = deprecated.contract().deprecation
    console.print(f"deprecated {deprecated.label}")
    if notice is not None and (notice.sunset_at is not None or notice.successor is not None):
        console.print(notice.notice(deprecated.label), soft_wrap=True)
    if latest is None:
        console.print(f"[yellow]{tenant}/{name} has no published version left[/yellow]")
    else:
        console.print(f"latest published version of {tenant}/{name}: {latest.version}")


def _unreviewed(contracts: list[tuple[Path, Contract]]) -> dict[Path, list[str]]:
    """Per file, what a person has not confirmed yet: a draft status, each `needs_review` item."""
    found: dict[Path, list[str]] = {}
    for path, contract in contracts:
        items = [f"needs review: {item}" for item in contract.needs_review or []]
        if contract.status is ContractStatus.DRAFT:
            items.insert(0, "status: draft (imported or unfinished)")
        if items:
            found[path] = items
    return found


def _published_events(outcomes: list[_Outcome], unreviewed: dict[Path, list[str]]) -> list[AuditEvent]:
    events = []
    for outcome in outcomes:
        if outcome.stored is None:
            continue
        event = _event("contract.publish", outcome.stored, outcome.diff, outcome.override)
        confirmed = unreviewed.get(outcome.path)
        if confirmed:
            event = replace(event, details={**event.details, "confirmed_unreviewed": confirmed})
        events.append(event)
    return events


def _event(
    kind: str, stored: StoredContract, diff: ContractDiff | None = None, override: str | None = None
) -> AuditEvent:
    """The audit record; a publish names the version it was compared with, and an override its reason."""
    from colonnade.cli._governance import OPERATOR
    from colonnade.governance.audit import AuditEvent, EventKind

    details: dict[str, object] = {
        "api": stored.name,
        "version": stored.version,
        "status": stored.status.value,
    }
    notice = stored.document.get("deprecation")
    if kind == "contract.deprecate" and notice:
        details["deprecation"] = notice
    if diff is not None:
        details["compatible_with"] = diff.old_version
        details["required_bump"] = diff.required_bump
        details["breaking"] = [change.to_dict() for change in diff.breaking]
    if override is None:
        return AuditEvent.by(OPERATOR, EventKind(kind), tenant=stored.tenant, details=details)
    details["breaking_tools"] = list(changed_tools(diff)) if diff is not None else []
    return AuditEvent.by(
        OPERATOR,
        EventKind(kind),
        tenant=stored.tenant,
        decision="breaking-allowed",
        reasons=(override,),
        details=details,
    )


def _load_valid(paths: list[Path]) -> list[tuple[Path, Contract]]:
    """Load and validate every file; report all problems, then stop unless every file is valid."""
    loaded: list[tuple[Path, Contract]] = []
    unreadable = invalid = 0
    for path in paths:
        try:
            loaded.append((path, load_contract(path)))
        except ContractLoadError as exc:
            unreadable += 1
            err_console.print(f"[red]error:[/red] {exc}", soft_wrap=True)
        except ContractInvalid as exc:
            invalid += 1
            for finding in exc.errors:
                err_console.print(_finding_line(path, finding), soft_wrap=True)
    if unreadable or invalid:
        failed = unreadable + invalid
        err_console.print(f"nothing published: {failed} of {len(paths)} file(s) cannot be published")
        raise typer.Exit(EXIT_USAGE if unreadable else EXIT_FINDINGS)
    return loaded


async def _publish_all(
    store: ContractStore, contracts: list[tuple[Path, Contract]], override: str | None
) -> list[_Outcome]:
    outcomes: list[_Outcome] = []
    columns = (TextColumn("publishing"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.description}"))
    with Progress(*columns, console=err_console, transient=True, disable=len(contracts) < 2) as progress:
        task = progress.add_task("", total=len(contracts))
        for path, contract in contracts:
            progress.update(task, description=str(path))
            outcomes.append(await _publish_one(store, path, contract, override))
            progress.advance(task)
    return outcomes


async def _publish_one(
    store: ContractStore, path: Path, contract: Contract, override: str | None
) -> _Outcome:
    try:
        before = await store.get(contract.tenant, contract.name, contract.version)
    except ContractNotFound:
        before = None
    diff = None
    if before is None or before.status is ContractStatus.DRAFT:  # a version published before was checked then
        diff = await _compatibility(store, contract)
        findings = compatibility_findings(diff, allow_breaking=override is not None) if diff else []
        for finding in findings:
            err_console.print(_finding_line(path, finding), soft_wrap=True)
        if any(finding.is_error for finding in findings):
            return _Outcome(path, contract, "refused: breaking changes need a major version", diff=diff)
        if diff is None or not diff.breaking or diff.bump_suffices:
            override = None  # nothing was overridden: the audit record says so
    else:
        override = None
    try:
        stored = await store.save(contract.model_copy(update={"status": ContractStatus.PUBLISHED}))
        if stored.status is not ContractStatus.PUBLISHED:
            stored = await store.publish(contract.tenant, contract.name, contract.version)
    except ContractConflict as exc:
        err_console.print(f"[red]error:[/red] {path}: {exc}", soft_wrap=True)
        return _Outcome(path, contract, "refused: bump the version")
    return _Outcome(path, contract, _result(before, stored), stored, diff, override)


async def _compatibility(store: ContractStore, contract: Contract) -> ContractDiff | None:
    from colonnade.runtime.publish_gate import compatibility_diff

    return await compatibility_diff(store, contract)


def _result(before: StoredContract | None, after: StoredContract) -> str:
    if before is None:
        return "published"
    if before.spec_hash != after.spec_hash:
        return "published (replaced the draft)"
    if before.status is ContractStatus.PUBLISHED:
        return "unchanged (already published)"
    return f"published (was {before.status.value})"


def _finding_line(path: Path, finding: Finding) -> str:
    where = f"{path}:{finding.line}:{finding.column}" if finding.line is not None else str(path)
    pointer = finding.path or "/"
    return f"{where}: [red]{finding.code}[/red] {pointer}: {finding.message} (fix: {finding.fix})"


def _stored_json(item: StoredContract) -> dict[str, object]:
    return {
        "tenant": item.tenant,
        "api": item.name,
        "version": item.version,
        "status": item.status.value,
        "spec_hash": item.spec_hash,
        "created_at": item.created_at.isoformat(),
        "updated_at": item.updated_at.isoformat(),
    }


def _status(status: ContractStatus) -> str:
    return f"[{_STATUS_STYLE[status]}]{status.value}[/{_STATUS_STYLE[status]}]"


def _when(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M")
