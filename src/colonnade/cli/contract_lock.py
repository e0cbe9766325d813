"""`colonnade contract lock` and `colonnade contract check --lock`: the tools a client depends on, pinned.

`colonnade.lock` records, for each tool a client or an environment depends on, the version and
the digest of its definition as the store serves it now (the newest published version of its
API). `check --lock` recomputes them from the store and exits 1 on drift: a locked tool that is
gone, whose served version moved to another definition, or whose locked version was deprecated.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from colonnade.cli.common import (
    EXIT_FINDINGS,
    EXIT_USAGE,
    console,
    err_console,
    fail,
    print_json,
    settings_of,
)
from colonnade.cli.contract_store import run_with_store

if TYPE_CHECKING:
    from colonnade.catalog.tool import Tool
    from colonnade.store import ContractStore

__all__ = ["check_command", "cli", "lock_command"]

LOCK_VERSION = 1
DEFAULT_LOCK = Path("colonnade.lock")

cli = typer.Typer()
"""What this module adds to its parent group; `colonnade.cli.root` lists it and loads it on first use."""


@dataclass(frozen=True, slots=True)
class _Served:
    """What the store serves now: the newest published tools, and every stored version's tools."""

    current: dict[str, Tool]
    versions: dict[tuple[str, str], tuple[Tool, str]]
    """(canonical name, version) -> the tool at that version and the version's status."""


@cli.command("lock")
def lock_command(
    ctx: typer.Context,
    tools: Annotated[
        list[str] | None,
        typer.Argument(
            help="Canonical tool names (tenant:api:tool) or APIs (tenant:api) to lock; "
            "none: every served tool.",
            show_default=False,
        ),
    ] = None,
    output: Annotated[Path, typer.Option("--output", "-o", help="The lockfile to write.")] = DEFAULT_LOCK,
) -> None:
    """Write colonnade.lock: the version and definition digest of each tool a client depends on.

    Example: colonnade contract lock acme:crm acme:billing:list_invoices -o colonnade.lock
    """
    served = run_with_store(settings_of(ctx), _served)
    chosen = _choose(served, tools or [])
    lock = {
        "lock_version": LOCK_VERSION,
        "tools": {
            name: {"version": tool.version, "digest": tool.digest, "wire_name": tool.wire_name}
            for name, tool in sorted(chosen.items())
        },
    }
    output.write_text(json.dumps(lock, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    console.print(f"locked {len(chosen)} tool(s) in {output}")


@cli.command("check")
def check_command(
    ctx: typer.Context,
    lock: Annotated[
        Path, typer.Option("--lock", help="The lockfile to check against the store.")
    ] = DEFAULT_LOCK,
    as_json: Annotated[bool, typer.Option("--json", help="Print the drift as JSON.")] = False,
) -> None:
    """Compare colonnade.lock with the store; exit 1 on drift (a tool gone, moved or deprecated).

    Example: colonnade contract check --lock colonnade.lock
    """
    locked = _read_lock(lock)
    served = run_with_store(settings_of(ctx), _served)
    drift = _drift(locked, served)
    if as_json:
        print_json({"lock": str(lock), "tools": len(locked), "drift": drift})
    elif not drift:
        console.print(f"{lock}: {len(locked)} tool(s), no drift")
    for item in [] if as_json else drift:
        err_console.print(f"[red]{item['kind']}[/red] {item['tool']}: {item['message']}", soft_wrap=True)
    if drift:
        raise typer.Exit(EXIT_FINDINGS)


def _read_lock(path: Path) -> dict[str, dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        fail(f"no lockfile at {path}; write one with `colonnade contract lock -o {path}`", EXIT_USAGE)
    except ValueError as exc:
        fail(
            f"{path} is not a colonnade lockfile (not JSON: {exc}); "
            "write it again with `colonnade contract lock`"
        )
    tools = data.get("tools") if isinstance(data, dict) else None
    if data.get("lock_version") != LOCK_VERSION or not isinstance(tools, dict):
        fail(
            f"{path} is not a colonnade lockfile of version {LOCK_VERSION}; "
            "write it again with `colonnade contract lock`"
        )
    return {str(name): dict(entry) for name, entry in tools.items()}


async def _served(store: ContractStore) -> _Served:
    from colonnade.catalog.projection import project_contract
    from colonnade.contracts.semver import parse_semver

    current: dict[str, Tool] = {}
    versions: dict[tuple[str, str], tuple[Tool, str]] = {}
    newest: dict[tuple[str, str], str] = {}
    for stored in await store.callable_contracts():
        for tool in project_contract(stored.contract()):
            versions[(tool.canonical_name, stored.version)] = (tool, stored.status.value)
        if stored.status.value == "published":
            key = (stored.tenant, stored.name)
            if key not in newest or parse_semver(stored.version) > parse_semver(newest[key]):
                newest[key] = stored.version
    for (name, version), (tool, _) in versions.items():
        tenant, api = name.split(":")[:2]
        if newest.get((tenant, api)) == version:
            current[name] = tool
    return _Served(current, versions)


def _choose(served: _Served, wanted: list[str]) -> dict[str, Tool]:
    if not wanted:
        return dict(served.current)
    chosen: dict[str, Tool] = {}
    for name in wanted:
        matched = {n: t for n, t in served.current.items() if n == name or n.startswith(f"{name}:")}
        if not matched:
            fail(
                f"{name!r} names no tool the store serves; see `colonnade contract list` "
                "(tenant:api or tenant:api:tool)"
            )
        chosen.update(matched)
    return chosen


def _drift(locked: dict[str, dict[str, Any]], served: _Served) -> list[dict[str, str]]:
    drift: list[dict[str, str]] = []
    for name, entry in sorted(locked.items()):
        version, digest = str(entry.get("version")), str(entry.get("digest"))
        at_version = served.versions.get((name, version))
        now = served.current.get(name)
        if at_version is None:
            drift.append(
                _item("gone", name, f"version {version} no longer serves it; re-lock after checking callers")
            )
            continue
        tool, status = at_version
        if tool.digest != digest:
            drift.append(
                _item(
                    "changed", name, f"version {version} has digest {tool.digest[:12]}, locked {digest[:12]}"
                )
            )
        elif status == "deprecated":
            drift.append(_item("deprecated", name, f"version {version} is deprecated; move and re-lock"))
        if now is None:
            drift.append(_item("gone", name, "no published version serves it any more (removed or renamed)"))
        elif now.version != version and now.digest != digest:
            drift.append(
                _item(
                    "moved",
                    name,
                    f"served at {now.version} with another definition (locked {version}); pin or re-lock",
                )
            )
    return drift


def _item(kind: str, tool: str, message: str) -> dict[str, str]:
    return {"kind": kind, "tool": tool, "message": message}
