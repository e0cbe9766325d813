"""Help that shows a flag as a flag: `--json`, not `--json <bool>`.

Typer 0.29's rich help prints every option's type, flags included, so `--json`, `--lazy` and even
`--help` read as if they took a value. A parameter's metavar is what help prints in that column: an
empty one for each flag (and for the help option, which Typer makes once per command and keeps)
leaves the column blank. Options that take a value keep their `<str>`, `<path>`, `<int range>`.
"""

from __future__ import annotations

from typing import Any, TypeVar

import typer
from typer.core import TyperCommand, TyperGroup

__all__ = ["HELP_OPTION_NAMES", "flags_without_values"]

HELP_OPTION_NAMES = ["-h", "--help"]
"""The help option of every command (the root's context settings pass it down)."""

CommandT = TypeVar("CommandT")


def flags_without_values(command: CommandT) -> CommandT:
    """`command` (and, in a Typer group, every command under it) with its flags shown without a value."""
    for param in getattr(command, "params", ()):
        _blank_if_flag(param)
    if isinstance(command, TyperCommand | TyperGroup):
        context = typer.Context(command, help_option_names=HELP_OPTION_NAMES)
        _blank_if_flag(command.get_help_option(context))
    members = getattr(command, "commands", None)
    if isinstance(members, dict):  # a lazy group's members are treated as each one loads
        for member in members.values():
            flags_without_values(member)
    return command


def _blank_if_flag(param: Any) -> None:
    if getattr(param, "is_flag", False) and param.metavar is None:
        param.metavar = ""
