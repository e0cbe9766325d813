"""Command groups that import a command's module only when that command is run (or its own help shown).

Every command module imports what its commands use: the gateway, the store, the router. Loaded all
at once they made `colonnade --version` take seconds. A group here knows each member by name, by the
module whose `cli` Typer defines it and by its one-line help, so listing a group imports nothing and
running one command imports one module. `tests/cli/test_lazy_commands.py` holds each listed line
equal to the command's own help and checks what `--version` and `--help` leave unimported.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field
from importlib import import_module
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperCommand, TyperGroup

from colonnade.cli.flag_display import flags_without_values

if TYPE_CHECKING:  # the click that Typer 0.29 vendors: its signatures name these, Typer exports no alias
    from typer._click import Command, Context, HelpFormatter

__all__ = ["Group", "LazyGroup", "Member", "lazy_group"]


@dataclass(frozen=True)
class Member:
    """A command defined in `module`'s `cli` Typer under the name it is listed by."""

    module: str
    help: str


@dataclass(frozen=True)
class Group:
    """A command group whose members come from several modules (`contract`, `tools`)."""

    help: str
    members: Mapping[str, Member] = field(default_factory=dict)


class _Commands(MutableMapping[str, "Command"]):
    """A group's commands by name: a listed member is built from its module on first access."""

    def __init__(self, listed: Mapping[str, Member | Group], defined: Mapping[str, Command]) -> None:
        self._listed = listed
        self._loaded: dict[str, Command] = dict(defined)

    def placeholder(self, name: str) -> Command | None:
        """What a help listing shows for `name`: the loaded command, or a stand-in with its listed help."""
        if name in self._loaded or name not in self._listed:
            return self._loaded.get(name)
        return flags_without_values(TyperCommand(name, help=self._listed[name].help))

    def __getitem__(self, name: str) -> Command:
        if name not in self._loaded:
            if name not in self._listed:
                raise KeyError(name)
            self._loaded[name] = _build(name, self._listed[name])
        return self._loaded[name]

    def __setitem__(self, name: str, command: Command) -> None:
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        self._loaded.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        yield from self._loaded
        yield from (name for name in self._listed if name not in self._loaded)

    def __len__(self) -> int:
        return len(set(self._loaded) | set(self._listed))


def _build(name: str, member: Member | Group) -> Command:
    if isinstance(member, Group):
        return LazyGroup(name=name, help=member.help, no_args_is_help=True, members=member.members)
    built = typer.main.get_group(import_module(member.module).cli)
    command = built.commands.get(name)
    if command is None:
        raise LookupError(f"{member.module}.cli defines no command {name!r}")
    return flags_without_values(command)


class LazyGroup(TyperGroup):
    """A Typer group whose listed members are imported on first use; its help listing imports none."""

    listed: Mapping[str, Member | Group] = {}

    def __init__(self, *, members: Mapping[str, Member | Group] | None = None, **attrs: Any) -> None:
        super().__init__(**attrs)
        self._members = _Commands(self.listed if members is None else members, self.commands)
        self.commands = self._members
        self._listing = False

    def list_commands(self, ctx: Context) -> list[str]:
        return list(self._members)

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        if self._listing:
            return self._members.placeholder(cmd_name)
        return self._members.get(cmd_name)

    def format_help(self, ctx: Context, formatter: HelpFormatter) -> None:
        flags_without_values(self)  # here: Typer adds the completion options after building the group
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


def lazy_group(members: Mapping[str, Member | Group]) -> type[LazyGroup]:
    """The group class of a Typer app (`typer.Typer(cls=...)`) whose commands are `members`."""
    return type("ListedGroup", (LazyGroup,), {"listed": members})
