"""`colonnade contract diff OLD NEW`: what a caller of OLD meets in NEW, and whether the bump says so.

Exit 0 when NEW's version bump covers its changes (breaking -> major, additive -> minor), 1 when a
breaking change hides under a smaller bump (what `contract publish` refuses), 2 when a file cannot
be read or is invalid. CI runs it against the last published version (`examples/ci/`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from colonnade.cli.common import EXIT_FINDINGS, EXIT_USAGE, OutputFormat, console, fail, print_json
from colonnade.contracts.compatibility import (
    ChangeClass,
    ContractDiff,
    compatibility_findings,
    diff_contracts,
)
from colonnade.contracts.load import ContractLoadError
from colonnade.contracts.model import Contract
from colonnade.contracts.validate import ContractInvalid, load_contract

__all__ = ["cli", "diff_command"]

_STYLE = {ChangeClass.BREAKING: "red", ChangeClass.ADDITIVE: "green", ChangeClass.DOCUMENTATION: "dim"}

cli = typer.Typer()
"""What this module adds to its parent group; `colonnade.cli.root` lists it and loads it on first use."""


@cli.command("diff")
def diff_command(
    old: Annotated[Path, typer.Argument(help="The earlier version (YAML or JSON).", show_default=False)],
    new: Annotated[Path, typer.Argument(help="The later version (YAML or JSON).", show_default=False)],
    output: Annotated[
        OutputFormat,
        typer.Option(
            "--format", "-f", help="text (a table) for people; json for tools and CI.", case_sensitive=False
        ),
    ] = OutputFormat.TEXT,
) -> None:
    """Classify each change between two contract versions: breaking, additive or documentation.

    Exits 1 when a breaking change comes without a major version bump (what `contract publish`
    refuses), so CI can run it against the last published version.

    Example: colonnade contract diff orders-1.0.0.yaml orders-1.1.0.yaml --format json
    """
    before, after = _load(old), _load(new)
    if (before.tenant, before.name) != (after.tenant, after.name):
        fail(
            f"{old} is {before.tenant}/{before.name} but {new} is {after.tenant}/{after.name}: "
            "diff two versions of the same API",
            EXIT_USAGE,
        )
    diff = diff_contracts(before, after)
    findings = compatibility_findings(diff)
    if output is OutputFormat.JSON:
        print_json({**diff.to_dict(), "findings": [f.to_dict() for f in findings]})
    else:
        _print(diff)
        for finding in findings:
            style = "red" if finding.is_error else "yellow"
            console.print(
                f"[{style}]{finding.code}[/{style}] {finding.message} (fix: {finding.fix})", soft_wrap=True
            )
    if any(f.is_error for f in findings):
        raise typer.Exit(EXIT_FINDINGS)


def _load(path: Path) -> Contract:
    try:
        return load_contract(path)
    except ContractLoadError as exc:
        fail(str(exc), EXIT_USAGE)
    except ContractInvalid as exc:
        fail(f"{exc}; fix it first (`colonnade contract validate {path}`)", EXIT_USAGE)


def _print(diff: ContractDiff) -> None:
    title = f"{diff.api} {diff.old_version} -> {diff.new_version}"
    if not diff.changes:
        console.print(f"{title}: no changes")
        return
    table = Table("class", "change", "tool", "where", "what", title=title)
    for change in diff.changes:
        style = _STYLE[change.change_class]
        table.add_row(
            f"[{style}]{change.change_class.value}[/{style}]",
            change.kind,
            change.tool or "(API)",
            change.path,
            change.message,
        )
    console.print(table)
    counts = ", ".join(f"{len(diff.of(cls))} {cls.value}" for cls in ChangeClass)
    verdict = "enough" if diff.bump_suffices else "not enough"
    console.print(
        f"{counts}; needs a {diff.required_bump} bump, got {diff.actual_bump} ({verdict})", soft_wrap=True
    )
