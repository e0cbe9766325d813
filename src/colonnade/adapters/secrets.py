"""Backend credentials by name: contracts name a secret, a resolver supplies its value.

A reference is `NAME` or `env:NAME` (the environment), `file:/path` or `store:NAME` (the sealed
store, per tenant); the composition root hands adapters one resolver for all of them. Values never
leave the resolver except into the request header that needs them; nothing here logs a value.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Protocol

from colonnade.config import ENV_PREFIX, secret_variables, split_secret_reference

__all__ = ["SECRET_ENV_PREFIX", "EnvSecretResolver", "SecretResolver"]

SECRET_ENV_PREFIX = ENV_PREFIX + "SECRET_"


class SecretResolver(Protocol):
    """Where secret values come from; async so a store-backed resolver fits the same shape.

    `tenant` is the tenant whose backend or server asks: a tenant-scoped secret is given to that
    tenant only (None: the gateway's own, e.g. the token-exchange client secret).
    """

    async def resolve(self, name: str, *, tenant: str | None = None) -> str | None:
        """The value of the secret, or None when it is not set (for this tenant)."""
        ...

    def how_to_set(self, name: str, *, tenant: str | None = None) -> str:
        """One sentence telling an operator how to provide the secret."""
        ...


class EnvSecretResolver:
    """Reads `COLONNADE_SECRET_<NAME>` (upper-cased, `.`/`-` as `_`), then `<NAME>` as written.

    Surrounding whitespace is dropped (a trailing newline from a file is a common slip) and
    an empty value counts as not set. `env:NAME` is the same as `NAME`; the environment has no tenants.
    """

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        self._environ = os.environ if environ is None else environ

    @staticmethod
    def variables(name: str) -> tuple[str, str]:
        return secret_variables(split_secret_reference(name)[1])

    async def resolve(self, name: str, *, tenant: str | None = None) -> str | None:
        provider, _ = split_secret_reference(name)
        if provider != "env":
            return None
        for variable in self.variables(name):
            value = self._environ.get(variable, "").strip()
            if value:
                return value
        return None

    def how_to_set(self, name: str, *, tenant: str | None = None) -> str:
        provider, _ = split_secret_reference(name)
        if provider != "env":
            return (
                f"the gateway reads {provider} secrets only when its vault is wired (`colonnade serve` does)"
            )
        preferred, plain = self.variables(name)
        return f"set the environment variable {preferred} (or {plain}) for the gateway process"
