"""The one secrets resolver the composition root hands to adapters: a reference to its provider."""

from __future__ import annotations

from collections.abc import Mapping

from colonnade.config import SECRET_PROVIDERS, split_secret_reference
from colonnade.governance.secrets.providers import SecretsProvider

__all__ = ["Secrets"]


class Secrets:
    """Resolves `env:`/`file:`/`store:` references (bare names: env), in the asking tenant's scope.

    Matches the adapters' `SecretResolver` protocol; a provider not wired (no database: no store)
    resolves nothing, and its hint says what is missing.
    """

    def __init__(self, providers: Mapping[str, SecretsProvider]) -> None:
        self.providers = dict(providers)

    async def resolve(self, name: str, *, tenant: str | None = None) -> str | None:
        provider, target = split_secret_reference(name)
        source = self.providers.get(provider)
        return await source.resolve(target, tenant=tenant) if source is not None else None

    def how_to_set(self, name: str, *, tenant: str | None = None) -> str:
        provider, target = split_secret_reference(name)
        source = self.providers.get(provider)
        if source is not None:
            return source.how_to_set(target, tenant=tenant)
        if provider == "store":
            return "stored secrets need the gateway's database (database_url, or the embedded SQLite)"
        return f"the provider {provider!r} is not available (providers: {', '.join(SECRET_PROVIDERS)})"
