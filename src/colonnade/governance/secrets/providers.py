"""Where a secret's value comes from: the provider interface, and the environment and file providers.

A reference names its provider (`env:NAME`, `file:/path`, `store:NAME`; a bare name is the
environment's); the provider gets the rest (its target) and the asking tenant. The stored
provider (`vault.py`) is the one with tenant scopes and rotation; the environment and files are
the operator's and hold one value for every tenant.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from colonnade.config import secret_variables

__all__ = ["EnvProvider", "FileProvider", "SecretsProvider"]

logger = logging.getLogger(__name__)


class SecretsProvider(Protocol):
    """One source of secret values; `target` is the reference without its provider prefix."""

    async def resolve(self, target: str, *, tenant: str | None) -> str | None:
        """The value, or None when it is not set (for this tenant)."""
        ...

    def how_to_set(self, target: str, *, tenant: str | None) -> str:
        """One sentence telling an operator how to provide it."""
        ...


class EnvProvider:
    """`COLONNADE_SECRET_<NAME>`, then `<NAME>` as written; surrounding whitespace dropped, empty is unset."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        self._environ = os.environ if environ is None else environ

    async def resolve(self, target: str, *, tenant: str | None) -> str | None:
        for variable in secret_variables(target):
            value = self._environ.get(variable, "").strip()
            if value:
                return value
        return None

    def how_to_set(self, target: str, *, tenant: str | None) -> str:
        preferred, plain = secret_variables(target)
        return f"set the environment variable {preferred} (or {plain}) for the gateway process"


class FileProvider:
    """A file holding the value (a mounted Kubernetes or Docker secret); a trailing newline is dropped.

    Relative paths are read from `base` (the configuration's folder). A file that group or others
    may read is used, with one warning per path: the value is only as secret as its file.
    """

    def __init__(self, base: Path | None = None) -> None:
        self.base = base
        self._warned: set[Path] = set()

    def path_of(self, target: str) -> Path:
        path = Path(target).expanduser()
        return path if path.is_absolute() or self.base is None else self.base / path

    async def resolve(self, target: str, *, tenant: str | None) -> str | None:
        path = self.path_of(target)
        try:
            with path.open("rb") as source:
                mode = os.fstat(source.fileno()).st_mode
                raw = source.read(64 * 1024 + 1)
        except FileNotFoundError:
            logger.warning("secret file %s does not exist", path)
            return None
        except OSError as exc:
            logger.warning("secret file %s cannot be read: %s", path, exc.strerror)
            return None
        if mode & (stat.S_IRWXG | stat.S_IRWXO) and path not in self._warned:
            self._warned.add(path)
            logger.warning("secret file %s is readable by group or others; chmod 600 it", path)
        if len(raw) > 64 * 1024:
            logger.warning("secret file %s holds more than 64 KiB; it is not read as a secret", path)
            return None
        try:
            value = raw.decode("utf-8").strip()
        except UnicodeDecodeError:
            logger.warning("secret file %s is not UTF-8 text", path)
            return None
        return value or None

    def how_to_set(self, target: str, *, tenant: str | None) -> str:
        path = self.path_of(target)
        return (
            f"write the value to {path}, readable by the gateway's user only (chmod 600); "
            "the gateway's log says why it could not be read"
        )
