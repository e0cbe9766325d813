"""The one place the release number lives: the package metadata, the CLI and the gateway all read it.

A module of its own, importing nothing, so `colonnade --version` and deep modules can read it without
loading the package's public names or risking an import cycle.
"""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
