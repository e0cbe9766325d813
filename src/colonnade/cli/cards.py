"""`colonnade cards export` and `colonnade cards validate`: an organ's capability cards on disk.

Export imports the organ's module once, asks it to describe itself and writes organ.json and
organ.toml; validate reads them back without importing anything and reports every finding
(ORG001-ORG016) in the same form as `colonnade contract validate`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from colonnade.cli.common import EXIT_FINDINGS, EXIT_OK, OutputFormat, err_console, fail, print_json
from colonnade.cli.contract_validate import FileReport, exit_code, print_reports, reports_json
from colonnade.organs.card_files import card_folders, write_cards
from colonnade.organs.card_loading import check_folder
from colonnade.organs.card_rules import validate_card_data
from colonnade.organs.loading import add_import_paths, import_organ
from colonnade.organs.organ_errors import OrganCardError, OrganLoadError

__all__ = ["cards_app", "cli", "export", "validate"]

cli = typer.Typer()
"""What this module adds to its parent group; `colonnade.cli.root` lists it and loads it on first use."""

cards_app = typer.Typer(
    help="Export and validate organ capability cards (organ.json + organ.toml).", no_args_is_help=True
)
cli.add_typer(cards_app, name="cards")

ImportPath = Annotated[
    list[Path] | None,
    typer.Option(
        "--import-path",
        "-I",
        help="Folder to import the module from (repeatable); the current folder is always searched.",
        show_default=False,
    ),
]


@cards_app.command("export")
def export(
    module: Annotated[
        str,
        typer.Argument(
            help="The organ: MODULE (its `organ` object) or MODULE:ATTRIBUTE.", show_default=False
        ),
    ],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Folder to write organ.json and organ.toml into.")
    ],
    import_path: ImportPath = None,
) -> None:
    """Import an organ's module, let it describe itself, and write its cards; then validate them.

    The card records the entrypoint (MODULE:ATTRIBUTE), so a gateway can serve the organ from its
    cards and import the module only on the first call. Exit 1 when the card has error findings
    (the files are written all the same, to be read).

    Example: colonnade cards export examples.organs.vault -o examples/organs/vault/cards
    """
    add_import_paths([*(import_path or []), Path.cwd()])
    try:
        organ, entrypoint = import_organ(module)
        card = organ.describe()
        if card.entrypoint is None:
            card = card.model_copy(update={"entrypoint": entrypoint})
        written = write_cards(card, output)
    except (OrganLoadError, OrganCardError) as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot write the cards into {output}: {exc.strerror or exc}")
    for path in written:
        err_console.print(f"wrote {path}", soft_wrap=True)
    findings = validate_card_data(card.to_data())
    if findings:
        print_reports([FileReport(str(written[0]), findings)])
    raise typer.Exit(EXIT_FINDINGS if any(f.is_error for f in findings) else EXIT_OK)


@cards_app.command("validate")
def validate(
    folders: Annotated[
        list[Path],
        typer.Argument(
            help="Card folders (organ.json / organ.toml), or folders of them.", show_default=False
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
    """Check organ cards without importing their modules: both files alike, schemas, tags, examples.

    Rules ORG001-ORG016 (docs/organs.md): valid JSON Schemas, 3-8 organ tags and 2-5 tags per
    function (lowercase, hyphenated), 2-4 examples per function that match its input schema,
    descriptions, idempotent and side_effects declared. Exit codes: 0 no errors (warnings allowed),
    1 errors (or warnings with --strict), 2 a folder holds no card.

    Example: colonnade cards validate examples/organs/vault/cards
    """
    try:
        found = card_folders(folders)
    except OrganCardError as exc:
        fail(str(exc))
    reports = [FileReport(str(folder), check_folder(folder)) for folder in found]
    if output is OutputFormat.JSON:
        print_json(reports_json(reports))
    else:
        print_reports(reports)
    raise typer.Exit(exit_code(reports, strict))
