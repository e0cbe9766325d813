"""`colonnade contract validate` and `colonnade contract schema`: is a contract valid, and against what.

Validation reports every finding of every file in one run. A file that cannot be read or
parsed is reported like a finding (code LOAD, with line and column for syntax errors), the
other files are still validated, and the exit code is 2.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.text import Text

from colonnade.cli.common import (
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_USAGE,
    OutputFormat,
    console,
    err_console,
    fail,
    print_json,
)
from colonnade.contracts.findings import Finding, Severity
from colonnade.contracts.load import ContractLoadError, load_document
from colonnade.contracts.uac_json_schema import schema_text, write_schema
from colonnade.contracts.validate import validate_document

__all__ = [
    "CONTRACT_SUFFIXES",
    "LOAD_CODE",
    "FileReport",
    "OutputFormat",
    "check_paths",
    "cli",
    "exit_code",
    "print_reports",
    "reports_json",
]

CONTRACT_SUFFIXES = (".yaml", ".yml", ".json")
LOAD_CODE = "LOAD"


@dataclass(frozen=True)
class FileReport:
    """The findings of one file; `unreadable` when it could not be loaded at all."""

    path: str
    findings: list[Finding]
    unreadable: bool = False

    def count(self, severity: Severity) -> int:
        return sum(1 for f in self.findings if f.severity is severity)


def check_paths(paths: list[Path]) -> list[FileReport]:
    """Validate every file named, and every contract file directly inside each directory named."""
    reports: list[FileReport] = []
    for path in paths:
        if path.is_dir():
            files = sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() in CONTRACT_SUFFIXES)
            if not files:
                reports.append(_unreadable(str(path), f"no {'/'.join(CONTRACT_SUFFIXES)} files in directory"))
            reports.extend(_check_file(p) for p in files)
        else:
            reports.append(_check_file(path))
    return reports


def exit_code(reports: list[FileReport], strict: bool) -> int:
    """2 when a file could not be read, else 1 for errors (or warnings with --strict), else 0."""
    if any(r.unreadable for r in reports):
        return EXIT_USAGE
    errors = sum(r.count(Severity.ERROR) for r in reports)
    warnings = sum(r.count(Severity.WARNING) for r in reports)
    return EXIT_FINDINGS if errors or (strict and warnings) else EXIT_OK


def _check_file(path: Path) -> FileReport:
    try:
        doc = load_document(path)
    except ContractLoadError as exc:
        return _unreadable(str(path), exc.message, exc.line, exc.column, exc.fix)
    return FileReport(str(path), validate_document(doc))


def _unreadable(
    path: str, message: str, line: int | None = None, column: int | None = None, fix: str | None = None
) -> FileReport:
    fix = fix or (
        f"fix the syntax at line {line}, column {column}"
        if line is not None
        else "check the path: it must name a readable .yaml, .yml or .json file, or a directory of them"
    )
    return FileReport(path, [Finding(LOAD_CODE, Severity.ERROR, "", message, fix, line, column)], True)


cli = typer.Typer()
"""What this module adds to its parent group; `colonnade.cli.root` lists it and loads it on first use."""


@cli.command("validate")
def validate(
    paths: Annotated[
        list[Path],
        typer.Argument(
            help="Contract files (.yaml, .yml, .json), or directories: every such file directly inside.",
            show_default=False,
        ),
    ],
    strict: Annotated[
        bool, typer.Option("--strict", help="Treat warnings as errors: exit 1 when there is any.")
    ] = False,
    output: Annotated[
        OutputFormat,
        typer.Option("--format", "-f", help="text for people; json for tools and CI.", case_sensitive=False),
    ] = OutputFormat.TEXT,
) -> None:
    """Check contracts against the UAC schema and rules UAC001-UAC023; report every finding.

    Exit codes: 0 no errors (warnings allowed), 1 errors (or warnings with --strict),
    2 a file is missing or unreadable (YAML/JSON syntax errors are reported with line and column).

    Example: colonnade contract validate --format json examples/contracts/
    """
    reports = check_paths(paths)
    if output is OutputFormat.JSON:
        print_json(reports_json(reports))
    else:
        print_reports(reports)
    raise typer.Exit(exit_code(reports, strict))


@cli.command("schema")
def schema(
    out: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Write the schema to this file instead of standard output."),
    ] = None,
) -> None:
    """Print (or write) the published JSON Schema (Draft 2020-12) of a contract document.

    Example: colonnade contract schema -o uac.schema.json
    """
    if out is None:
        typer.echo(schema_text(), nl=False)
        return
    try:
        written = write_schema(out)
    except OSError as exc:
        fail(f"cannot write {out}: {exc.strerror or exc}")
    err_console.print(f"wrote {written}", soft_wrap=True)


def reports_json(reports: list[FileReport]) -> dict[str, Any]:
    return {
        "files": [{"path": r.path, "findings": [f.to_dict() for f in r.findings]} for r in reports],
        "errors": sum(r.count(Severity.ERROR) for r in reports),
        "warnings": sum(r.count(Severity.WARNING) for r in reports),
    }


_STYLES = {Severity.ERROR: "bold red", Severity.WARNING: "yellow"}


def print_reports(reports: list[FileReport]) -> None:
    for report in reports:
        if not report.findings:
            console.print(Text.assemble((report.path, "bold"), ": ", ("ok", "green")), soft_wrap=True)
        for finding in report.findings:
            console.print(_finding_line(report.path, finding), soft_wrap=True)
            console.print(Text.assemble("    fix: ", (finding.fix, "dim")), soft_wrap=True)
    errors = sum(r.count(Severity.ERROR) for r in reports)
    warnings = sum(r.count(Severity.WARNING) for r in reports)
    summary = f"{_plural(errors, 'error')}, {_plural(warnings, 'warning')} in {_plural(len(reports), 'file')}"
    console.print(Text(summary, style="bold red" if errors else "bold"), soft_wrap=True)


def _finding_line(path: str, finding: Finding) -> Text:
    where = path if finding.line is None else f"{path}:{finding.line}:{finding.column}"
    return Text.assemble(
        (where, "bold"),
        "  ",
        (finding.code, _STYLES[finding.severity]),
        "  ",
        (finding.severity.value, _STYLES[finding.severity]),
        "  ",
        (finding.path or "(document)", "cyan"),
        "  ",
        finding.message,
    )


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
