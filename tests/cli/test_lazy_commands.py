"""`colonnade --version` and `--help` load no gateway; each listed command is the command it names.

The guarantee is what the process imports, not how long it takes: a command module that pulls the
gateway, the store or the SDK into the root path fails here on any machine, busy or idle.
"""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from collections.abc import Iterator, Mapping
from importlib import import_module

import pytest
import typer

from colonnade.cli.lazy_group import Group, Member
from colonnade.cli.root import COMMANDS, app

_HEAVY = (  # not pydantic: Typer 0.29 coerces option values with it
    "colonnade.runtime",
    "colonnade.surfaces",
    "colonnade.calls",
    "colonnade.store",
    "colonnade.routing",
    "colonnade.governance",
    "colonnade.adapters",
    "colonnade.config",
    "sqlalchemy",
    "mcp",
    "bm25s",
    "regopy",
    "starlette",
    "uvicorn",
    "aiohttp",
    "httpx2",
    "numpy",
)

_PROBE = """
import json, sys
sys.argv = ["colonnade", *json.loads(sys.argv[1])]
from colonnade.cli import main
try:
    main()
except SystemExit:
    pass
sys.stderr.write("\\nMODULES " + json.dumps(sorted(sys.modules)))
"""


def _imported(*args: str) -> set[str]:
    """The modules a fresh `colonnade ARGS` process has loaded when it ends."""
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(list(args))],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    marker = done.stderr.rfind("MODULES ")
    assert marker >= 0, done.stderr
    return set(json.loads(done.stderr[marker + len("MODULES ") :]))


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in _HEAVY))


def _command_modules(modules: set[str]) -> list[str]:
    listed = {member.module for _, member in _members(COMMANDS)}
    return sorted(modules & listed)


@pytest.mark.parametrize("args", [("--version",), ("--help",), ("contract", "--help"), ("tools", "--help")])
def test_version_and_help_import_neither_the_gateway_nor_a_command_module(args: tuple[str, ...]) -> None:
    modules = _imported(*args)
    assert _heavy(modules) == []
    assert _command_modules(modules) == []


def test_the_probe_sees_what_a_command_imports() -> None:
    """The check above can fail: a command's own help loads its module and what that module uses."""
    modules = _imported("tools", "search", "--help")
    assert "colonnade.cli.tools" in modules
    assert "colonnade.config" in _heavy(modules)


def _members(
    table: Mapping[str, Member | Group], path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], Member]]:
    for name, entry in table.items():
        if isinstance(entry, Group):
            yield from _members(entry.members, (*path, name))
        else:
            yield (*path, name), entry


def _resolve(path: tuple[str, ...]) -> typer.core.TyperCommand | typer.core.TyperGroup:
    command = typer.main.get_command(app)
    context = typer.Context(command)
    for name in path:
        command = command.get_command(context, name)
        assert command is not None, path
    return command


def _first_paragraph(text: str | None) -> str:
    return " ".join(inspect.cleandoc(text or "").split("\n\n")[0].split())


def test_every_listed_line_is_the_commands_own_help() -> None:
    """The root's table repeats each command's first help line; a change to one without the other fails."""
    differing = []
    for path, member in _members(COMMANDS):
        own = _first_paragraph(_resolve(path).help)
        if own != member.help:
            differing.append((" ".join(path), member.help, own))
    assert differing == []
    for name, entry in COMMANDS.items():
        if isinstance(entry, Group):
            assert _first_paragraph(_resolve((name,)).help) == entry.help


def test_the_root_listing_shows_every_command_once_in_table_order() -> None:
    root = typer.main.get_command(app)
    assert root.list_commands(typer.Context(root)) == list(COMMANDS)


def test_every_command_a_module_defines_is_listed() -> None:
    """A command added to a module's `cli` but not to the root's table would be unreachable."""
    listed: dict[str, set[str]] = {}
    for path, member in _members(COMMANDS):
        listed.setdefault(member.module, set()).add(path[-1])
    for module, names in listed.items():
        defined = set(typer.main.get_group(import_module(module).cli).commands)
        assert defined == names, module
