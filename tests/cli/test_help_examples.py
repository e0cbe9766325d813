"""Every command's `--help` shows an example: a newcomer copies one line and adapts it."""

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
