"""The `colonnade` command line: one root Typer app; each command group lives in its own module."""

from __future__ import annotations


from colonnade.cli.root import app, main

__all__ = ["app", "main"]
