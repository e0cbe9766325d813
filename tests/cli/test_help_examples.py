"""Every command's `--help` shows an example, and shows a flag as a flag (`--json`, never `--json <bool>`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import typer
from typer.testing import CliRunner

from colonnade.cli import app


def _commands(group: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Every leaf command under the group (Typer's groups may be its own click's: read `commands`)."""
    for name, command in sorted(group.commands.items()):
        if hasattr(command, "commands"):
            yield from _commands(command, (*path, name))
        else:
            yield (*path, name)


def test_every_command_help_carries_an_example() -> None:
    root = typer.main.get_command(app)
    assert hasattr(root, "commands")
    commands = list(_commands(root))
    assert len(commands) > 40  # the whole tree was walked
    lacking = []
    for path in commands:
        result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "200"})
        assert result.exit_code == 0, (path, result.output)
        if "Example" not in result.output or "colonnade " not in result.output:
            lacking.append(" ".join(path))
    assert lacking == [], f"{len(lacking)} commands without an example in --help: {lacking}"


def _groups(group: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    yield path
    for name, command in sorted(group.commands.items()):
        if hasattr(command, "commands"):
            yield from _groups(command, (*path, name))


def test_no_help_shows_a_value_after_a_flag() -> None:
    """Typer prints `<bool>` after flags; every help page of the tree (groups and leaves) must not."""
    root = typer.main.get_command(app)
    pages = [*_groups(root), *_commands(root)]
    assert len(pages) > 50
    showing = []
    for path in pages:
        result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "200"})
        assert result.exit_code == 0, (path, result.output)
        assert "--help" in result.output
        if "<bool>" in result.output:
            showing.append(" ".join(path) or "(root)")
    assert showing == [], f"flags shown as taking a value in: {showing}"


def test_an_option_that_takes_a_value_still_shows_its_type() -> None:
    """The fix blanks flags only: `--k <int range>` and `--config <path>` keep what they take."""
    search = CliRunner().invoke(app, ["tools", "search", "--help"], env={"COLUMNS": "200"})
    assert "<int range>" in search.output
    root = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "200"})
    assert "<path>" in root.output
