"""`colonnade contract import-openapi` and `export-openapi`: between OpenAPI 3.x and contracts.

The imported contract goes to stdout (or `-o`), the import report to stderr, so
`colonnade contract import-openapi spec.yaml --tenant acme > api.yaml` keeps both apart.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from colonnade.cli.common import OutputFormat, err_console, fail, print_json
from colonnade.contracts.load import ContractLoadError, Document, load_document
from colonnade.contracts.model import Contract
from colonnade.contracts.openapi import ImportResult, OpenApiError, export_openapi, import_openapi

__all__ = ["cli", "dump_document", "export_command", "import_command", "render_report"]

_DRAFT_HEADER = (
    "# Draft contract imported from {source} by `colonnade contract import-openapi`.\n"
    "# Review the llm blocks listed in the import report, then validate and publish.\n"
)


def dump_document(data: Any, output: Path | None, *, header: str = "") -> None:
    """YAML (JSON when `output` ends in .json) to `output`, or to stdout when it is `None`."""
    as_json = output is not None and output.suffix.lower() == ".json"
    if as_json:
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    else:
        text = header + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
    if output is None:
        typer.echo(text, nl=False)
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        fail(escape(f"cannot write {output}: {exc.strerror or exc}"))


def _load(path: Path) -> Document:
    try:
        return load_document(path)
    except ContractLoadError as exc:
        fail(escape(str(exc)))


def _located(doc: Document, exc: OpenApiError) -> str:
    """`spec.yaml:12:7: message (at /pointer); hint` when the pointer has a known position."""
    position = doc.position(exc.pointer) if exc.pointer is not None else None
    where = f"{doc.path}:{position[0]}:{position[1]}" if position else doc.path
    return f"{where}: {exc}"


def _table(title: str, *columns: str) -> Table:
    table = Table(title=title, title_justify="left", show_lines=False)
    for column in columns:
        table.add_column(column, overflow="fold")
    return table


def render_report(result: ImportResult, written_to: str, out: Console | None = None) -> None:
    """The import report (on stderr by default): imported, needing review, skipped, notes."""
    out = out or err_console
    reviewed = {r.operation_id for r in result.needs_review}
    imported = _table("Imported operations", "method", "path", "operation id", "tool name", "review")
    for op in result.imported:
        flag = (
            Text("needs review", style="yellow") if op.operation_id in reviewed else Text("ok", style="green")
        )
        imported.add_row(Text(op.method), Text(op.path), Text(op.operation_id), Text(op.tool_name), flag)
    out.print(imported)
    if result.needs_review:
        review = _table("Needs human review", "operation", "reason")
        for item in result.needs_review:
            review.add_row(Text(f"{item.method} {item.path} ({item.operation_id})"), Text(item.reason))
        out.print(review)
    if result.needs_human:
        human = _table("Needs a human (credentials and access)", "about", "what to do")
        for note in result.needs_human:
            human.add_row(Text(note.subject), Text(note.message))
        out.print(human)
    if result.skipped:
        skipped = _table("Skipped (not imported)", "operation", "reason")
        for skip in result.skipped:
            named = f" ({skip.operation_id})" if skip.operation_id else ""
            skipped.add_row(Text(f"{skip.method} {skip.path}{named}"), Text(skip.reason))
        out.print(skipped)
    if result.notes:
        notes = _table("Notes", "about", "note")
        for note in result.notes:
            notes.add_row(Text(note.subject), Text(note.message))
        out.print(notes)
    summary = Text(
        f"{len(result.imported)} imported, {len(result.needs_review)} need review, "
        f"{len(result.needs_human)} need a human, {len(result.skipped)} skipped -> {written_to}"
    )
    out.print(summary)


cli = typer.Typer()
"""What this module adds to its parent group; `colonnade.cli.root` lists it and loads it on first use."""


@cli.command("import-openapi")
def import_command(
    spec: Annotated[
        Path, typer.Argument(help="OpenAPI 3.0 or 3.1 document (YAML or JSON).", show_default=False)
    ],
    tenant: Annotated[
        str,
        typer.Option(
            "--tenant", "-t", help="Tenant that owns the contract (kebab-case).", show_default=False
        ),
    ],
    api: Annotated[
        str | None,
        typer.Option("--api", help="Contract name (kebab-case); default: info.title in kebab-case."),
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option("--base-url", help="Backend base URL; default: the document's first server URL."),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="Write the contract here (YAML, or JSON for .json); default: stdout."
        ),
    ] = None,
    report_format: Annotated[
        OutputFormat,
        typer.Option(
            "--format",
            "-f",
            help="The import report as text tables, or as one JSON object: on stdout when -o writes the "
            "contract to a file, else on stderr.",
            case_sensitive=False,
        ),
    ] = OutputFormat.TEXT,
) -> None:
    """Import an OpenAPI document as a draft contract and report what needs a human.

    One endpoint per operation; operations that cannot be mapped (e.g. form-encoded bodies) are
    skipped and listed with the reason. Security schemes become backend.auth with the name of a
    secret (a credential is never a tool argument); what that leaves to a person (a token to
    obtain, a key the contract cannot send) is listed, and written to the contract's
    needs_review. Exit code 0 when a contract was written, 2 when the document cannot be read or
    is not OpenAPI 3.x.

    Example: colonnade contract import-openapi petstore.yaml --tenant acme -o pets.yaml --format json
    """
    doc = _load(spec)
    try:
        result = import_openapi(doc.data, tenant=tenant, api=api, base_url=base_url, source=str(spec))
    except OpenApiError as exc:
        fail(escape(_located(doc, exc)))
    dump_document(result.contract_data, output, header=_DRAFT_HEADER.format(source=spec.name))
    written_to = str(output) if output is not None else "stdout"
    if report_format is OutputFormat.JSON:
        print_json({**result.report(), "written_to": written_to}, err=output is None)
    else:
        render_report(result, written_to)


def _contract(path: Path) -> Contract:
    data = _load(path).data
    try:
        return Contract.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = "/" + "/".join(str(p) for p in first["loc"])
        count = exc.error_count()
        fail(
            escape(
                f"{path}: not a valid contract ({count} problem(s); first at {where}: {first['msg']}); "
                f"run `colonnade contract validate {path}` to see them all"
            )
        )


@cli.command("export-openapi")
def export_command(
    contract: Annotated[Path, typer.Argument(help="Contract file (YAML or JSON).", show_default=False)],
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Write OpenAPI here (YAML, or JSON for .json); default: stdout."),
    ] = None,
) -> None:
    """Export a contract as an OpenAPI 3.1 document, with each llm block as `x-llm`.

    Importing the result gives back an equivalent contract (as a draft).

    Example: colonnade contract export-openapi examples/contracts/crm.yaml -o crm.openapi.yaml
    """
    model = _contract(contract)
    try:
        document = export_openapi(model)
    except OpenApiError as exc:
        fail(escape(f"{contract}: {exc}"))
    dump_document(document, output)
