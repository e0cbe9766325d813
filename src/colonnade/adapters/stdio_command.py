"""Whether a stdio server's command can start here: a missing executable is refused when it is added.

The gateway starts the process, so the check runs on the gateway's host, with the PATH the child
gets (the server's `env.PATH`, else the gateway's) and relative paths taken from its `cwd`.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from colonnade.config import McpServerSettings

__all__ = ["missing_command"]


def missing_command(server: McpServerSettings) -> str | None:
    """Why the stdio server's command cannot start (not found, not executable), or None."""
    if server.transport != "stdio" or server.command is None:
        return None
    command = server.command
    if os.sep in command:
        path = Path(command) if Path(command).is_absolute() else Path(server.cwd or ".") / command
        if not path.is_file():
            return f"the command {command!r} of stdio server {server.name!r} does not exist ({path})"
        if not os.access(path, os.X_OK):
            return f"the command {command!r} of stdio server {server.name!r} is not executable ({path})"
        return None
    search = server.env.get("PATH", os.environ.get("PATH", os.defpath))
    if shutil.which(command, path=search) is None:
        return (
            f"the command {command!r} of stdio server {server.name!r} is not on the gateway's PATH: "
            "install it, give its absolute path, or set env.PATH in the server's definition"
        )
    return None
