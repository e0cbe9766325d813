"""Start a stdio server confined: its command wrapped by the launcher, its cgroups made and removed."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path

from mcp.client.stdio import StdioServerParameters

from colonnade.adapters.sandbox.cgroups import Cgroups
from colonnade.adapters.sandbox.confinement import (
    Confinement,
    host_abilities,
    launcher_prefix,
    plan,
    resolved_path,
)
from colonnade.config import McpServerSettings

__all__ = ["SandboxRefused", "confined"]


class SandboxRefused(Exception):
    """The server's confinement cannot be enforced here and its settings say strict."""


@contextlib.asynccontextmanager
async def confined(
    server: McpServerSettings, params: StdioServerParameters, *, hidden: tuple[Path, ...] = ()
) -> AsyncIterator[tuple[StdioServerParameters, Confinement]]:
    """`params` rewritten to start through the launcher, for as long as the process may live."""
    host = host_abilities()
    confinement = plan(server, hidden=hidden, host=host)
    if not confinement.enabled:
        yield params, confinement
        return
    refusal = confinement.refusal()
    if refusal is not None:
        raise SandboxRefused(refusal)
    box = server.sandbox
    groups = Cgroups.make(
        host.cgroups, server.name, memory_mb=box.memory_mb, cpu_percent=box.cpu_percent, pids_max=box.pids_max
    )
    try:
        spec = {
            **confinement.spec,
            "command": params.command,
            "path": resolved_path(server),
            "cgroups": [os.fspath(group) for group in groups.directories],
            "memory_events": _path(groups.memory_events),
            "memory_failcnt": _path(groups.memory_failcnt),
            "pids_events": _path(groups.pids_events),
        }
        prefix = launcher_prefix()
        wrapped = params.model_copy(
            update={
                "command": prefix[0],
                "args": [*prefix[1:], json.dumps(spec), "--", params.command, *params.args],
            }
        )
        yield wrapped, confinement
    finally:
        await asyncio.to_thread(groups.remove)  # it may wait for the last members to die


def _path(path: Path | None) -> str | None:
    return os.fspath(path) if path is not None else None
