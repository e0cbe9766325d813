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
from colonnade.contracts.llm_ready import Verdict, llm_ready_findings, verdicts
from colonnade.contracts.load import ContractLoadError, load_document
from colonnade.contracts.uac_json_schema import schema_text, write_schema
from colonnade.contracts.validate import ContractInvalid, load_contract, parse_contract, validate_document

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
    llm_ready: Annotated[
        bool,
        typer.Option("--llm-ready", help="Report each MCP endpoint's LLM-ready verdict (criteria R1-R7)."),
    ] = False,
    v2: Annotated[
        bool,
        typer.Option(
            "--v2",
            help="Every new MCP endpoint must be LLM-ready (LLM001: an error when published, a warning in a "
            "draft); implies --llm-ready.",
        ),
    ] = False,
    against: Annotated[
        Path | None,
        typer.Option(
            "--against",
            help="With --v2: the previous version, whose endpoints are grandfathered (listed, LLM002).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Check contracts against the UAC schema and rules UAC001-UAC023; report every finding.

    Exit codes: 0 no errors (warnings allowed), 1 errors (or warnings with --strict),
    2 a file is missing or unreadable (YAML/JSON syntax errors are reported with line and column).

    Example: colonnade contract validate --format json examples/contracts/
    """
    reports = check_paths(paths)
    judged: dict[str, list[Verdict]] = {}
    if llm_ready or v2:
        legacy = _legacy_tools(against) if against is not None else set()
        reports, judged = _judge(reports, legacy, v2)
    if output is OutputFormat.JSON:
        data = reports_json(reports)
        if judged:
            for entry in data["files"]:
                entry["llm_ready"] = [v.to_dict() for v in judged.get(entry["path"], [])]
        print_json(data)
    else:
        print_reports(reports)
        for path, found in judged.items():
            _print_verdicts(path, found)
    raise typer.Exit(exit_code(reports, strict))


def _legacy_tools(path: Path) -> set[str]:
    try:
        previous = load_contract(path)
    except (ContractLoadError, ContractInvalid) as exc:
        fail(f"--against {path}: {exc}", EXIT_USAGE)
    return {op.tool_name for op in previous.operations() if op.endpoint.mcp}


def _judge(
    reports: list[FileReport], legacy: set[str], v2: bool
) -> tuple[list[FileReport], dict[str, list[Verdict]]]:
    """Each valid file's verdicts; with V2, its LLM001/LLM002 findings added to its report."""
    judged: dict[str, list[Verdict]] = {}
    out: list[FileReport] = []
    for report in reports:
        contract = None
        if not report.unreadable and report.count(Severity.ERROR) == 0:
            try:
                contract = parse_contract(load_document(report.path).data)
            except (ContractLoadError, ContractInvalid):
                contract = None
        if contract is None:
            out.append(report)
            continue
        judged[report.path] = verdicts(contract, report.findings)
        extra = llm_ready_findings(contract, report.findings, legacy=legacy) if v2 else []
        out.append(FileReport(report.path, [*report.findings, *extra]))
    return out, judged


def _print_verdicts(path: str, found: list[Verdict]) -> None:
    ready = sum(1 for v in found if v.ready)
    console.print(
        Text.assemble((path, "bold"), f": {ready} of {len(found)} MCP endpoints LLM-ready"), soft_wrap=True
    )
    for verdict in found:
        if verdict.ready:
            console.print(
                Text.assemble("  ", (verdict.tool, "bold"), "  ", ("LLM-ready", "green")), soft_wrap=True
            )
            continue
        failing = "; ".join(f"{code} {why}" for code, why in verdict.failing)
        console.print(
            Text.assemble("  ", (verdict.tool, "bold"), "  ", ("not LLM-ready", "yellow"), f"  {failing}"),
            soft_wrap=True,
        )


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
