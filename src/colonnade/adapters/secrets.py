"""Backend credentials by name: contracts name a secret, a resolver supplies its value.

Values never leave the resolver except into the request header that needs them; nothing here
logs or formats a value.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Protocol

__all__ = ["SECRET_ENV_PREFIX", "EnvSecretResolver", "SecretResolver"]

SECRET_ENV_PREFIX = "COLONNADE_SECRET_"
_NOT_ENV_CHARS = re.compile(r"[^A-Za-z0-9_]")


class SecretResolver(Protocol):
    """Where secret values come from; async so a vault-backed resolver fits the same shape."""

    async def resolve(self, name: str) -> str | None:
        """The value of the secret, or None when it is not set."""
        ...

    def how_to_set(self, name: str) -> str:
        """One sentence telling an operator how to provide the secret."""
        ...


class EnvSecretResolver:
    """Reads `COLONNADE_SECRET_<NAME>` (upper-cased, `.`/`-` as `_`), then `<NAME>` as written.

    Surrounding whitespace is dropped (a trailing newline from a file is a common slip) and
    an empty value counts as not set.
    """

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        self._environ = os.environ if environ is None else environ

    @staticmethod
    def variables(name: str) -> tuple[str, str]:
        return SECRET_ENV_PREFIX + _NOT_ENV_CHARS.sub("_", name).upper(), name

    async def resolve(self, name: str) -> str | None:
        for variable in self.variables(name):
            value = self._environ.get(variable, "").strip()
            if value:
                return value
        return None

    def how_to_set(self, name: str) -> str:
        preferred, plain = self.variables(name)
        return f"set the environment variable {preferred} (or {plain}) for the gateway process"
