"""The sha256 of the files a stdio server's command runs: what `pin_command` compares at each start.

The executable is found as the spawn finds it (`stdio_command.command_path`: the server's PATH, or
its cwd for a relative path) and read through symbolic links, so a package manager's `bin/` link
to a changed file is a change. An interpreter (python, node) is one such file; the scripts it runs
are pinned only when listed in `pin_command.files`.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from colonnade.adapters.stdio_command import command_path
from colonnade.config import McpServerSettings

__all__ = ["EXECUTABLE", "CommandFilesMissing", "command_digests", "file_sha256"]

EXECUTABLE = "executable"
"""The role of the command's own file in the digests (the other files are named by their path)."""

_CHUNK = 1 << 20


class CommandFilesMissing(Exception):
    """A file the pin names (or the command itself) is not there: the definition must be fixed."""


def command_digests(server: McpServerSettings) -> dict[str, str]:
    """`{"executable": "<path> sha256:<hex>", "<file>": "sha256:<hex>", ...}` for the server's pin."""
    pin = server.pin_command
    executable = command_path(server)
    if executable is None:
        raise CommandFilesMissing(
            f"the command {server.command!r} of stdio server {server.name!r} is not found"
        )
    real = Path(os.path.realpath(executable))
    digests = {EXECUTABLE: f"{real} sha256:{file_sha256(real)}"}
    for listed in pin.files if pin is not None else []:
        path = listed if listed.is_absolute() else Path(server.cwd or ".") / listed
        if not path.is_file():
            raise CommandFilesMissing(
                f"pin_command.files of stdio server {server.name!r} names {os.fspath(listed)!r}, which is not"
                f" a file ({path}): fix the path, or remove it from the list"
            )
        digests[os.path.abspath(path)] = f"sha256:{file_sha256(path)}"
    return digests


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        while chunk := file.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()
