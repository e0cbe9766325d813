"""Whether a stdio server's command can start here: a missing executable is refused when it is added.

The gateway starts the process, so the check runs on the gateway's host, with the PATH the child
gets (the server's `env.PATH`, else the gateway's) and relative paths taken from its `cwd`.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from colonnade.config import McpServerSettings

__all__ = ["command_path", "missing_command"]


def missing_command(server: McpServerSettings) -> str | None:
    """Why the stdio server's command cannot start (not found, not executable, no such cwd), or None."""
    if server.transport != "stdio" or server.command is None:
        return None
    if server.cwd is not None and not Path(server.cwd).is_dir():
        return (
            f"the working directory {os.fspath(server.cwd)!r} of stdio server {server.name!r} does not "
            "exist or is not a directory: create it, or fix `cwd` in the server's definition"
        )
    command = server.command
    if os.sep in command:
        path = _relative_to_cwd(server, command)
        if not path.is_file():
            return f"the command {command!r} of stdio server {server.name!r} does not exist ({path})"
        if not os.access(path, os.X_OK):
            return f"the command {command!r} of stdio server {server.name!r} is not executable ({path})"
        return None
    if command_path(server) is None:
        return (
            f"the command {command!r} of stdio server {server.name!r} is not on the gateway's PATH: "
            "install it, give its absolute path, or set env.PATH in the server's definition"
        )
    return None


def command_path(server: McpServerSettings) -> Path | None:
    """The file the stdio server's command starts, found as the spawn finds it (PATH, or cwd)."""
    if server.command is None:
        return None
    if os.sep in server.command:
        path = _relative_to_cwd(server, server.command)
        return path if path.is_file() else None
    search = server.env.get("PATH", os.environ.get("PATH", os.defpath))
    found = shutil.which(server.command, path=search)
    return Path(found) if found is not None else None


def _relative_to_cwd(server: McpServerSettings, command: str) -> Path:
    return Path(command) if Path(command).is_absolute() else Path(server.cwd or ".") / command
