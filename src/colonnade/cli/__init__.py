"""The `colonnade` command line: one root Typer app; each command group lives in its own module.

`colonnade.cli.root` lists the commands; a command's module is imported when that command runs.
"""

from __future__ import annotations

from colonnade.cli.root import app, main

__all__ = ["app", "main"]
