"""Per-user upstream accounts (mode user_oauth), wired: the grants service, and its end with the user.

The service needs the database (grants live there, refresh tokens sealed with the data
directory's key ring) and `upstream_oauth:` providers; without either there is none, and a call
of a user_oauth upstream says what is missing. A revoked API key ends its owner's grants, a
revoked agent its own: revoked at each provider and deleted, and every replica drops the access
tokens it still holds for that principal.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.adapters.credentials import ConnectFailed, Connection, UserOAuth
from colonnade.adapters.secrets import SecretResolver
from colonnade.config import Settings
from colonnade.governance.identity.exposure import AuthConfigError, resource_url
from colonnade.governance.principal import Principal, PrincipalKind
from colonnade.runtime.governance import sealer
from colonnade.shared_state import Change, Fanout
from colonnade.shared_state.topics import UPSTREAM_GRANTS_REMOVED
from colonnade.store.agents_repo import AgentRecord
from colonnade.store.api_keys_repo import ApiKeyRecord
from colonnade.store.upstream_grants_repo import UpstreamGrantStore

__all__ = ["CONNECTIONS_PATH", "UpstreamAccounts", "user_oauth_service"]

CONNECTIONS_PATH = "/ui/connections"
CALLBACK_SUFFIX = "/callback"


def user_oauth_service(
    settings: Settings, engine: AsyncEngine | None, secrets: SecretResolver
) -> UserOAuth | None:
    if not settings.upstream_oauth:
        return None
    store = UpstreamGrantStore(engine) if engine is not None else None
    return UserOAuth(
        settings.upstream_oauth,
        secrets,
        sealer(settings),  # the vault's key ring (vault.key_ring_env / _file / the data dir's)
        store,
        connect_url=_origin(settings) + CONNECTIONS_PATH,
    )


def _origin(settings: Settings) -> str:
    """scheme://host[:port] people reach the gateway at: the resource URL's, else the bind address."""
    if settings.auth.resource or settings.auth.configured:
        try:
            parts = urlsplit(resource_url(settings))
        except AuthConfigError:
            pass
        else:
            return f"{parts.scheme}://{parts.netloc}"
    server = settings.server
    host = f"[{server.host}]" if ":" in server.host else server.host
    return f"{server.scheme}://{host}:{server.port}"


def _origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


class UpstreamAccounts:
    """Ends a principal's upstream grants when the principal ends, on every replica."""

    def __init__(self, service: UserOAuth, changes: Fanout | None = None) -> None:
        self.service = service
        self.changes = changes

    # What the Connected accounts page asks (surfaces/pages/connections_view.py).

    def provider_origins(self) -> list[str]:
        """Where a Connect form's redirect may go (the page's CSP form-action)."""
        return sorted({_origin_of(spec.authorization_endpoint) for spec in self.service.providers.values()})

    async def connections(self, principal: Principal) -> list[Connection]:
        return await self.service.connections(principal)

    def begin(self, principal: Principal, provider: str) -> tuple[str, str] | str:
        try:
            started = self.service.begin(principal, provider, self.redirect_uri)
        except ConnectFailed as exc:
            return str(exc)
        return started.url, started.binding

    async def complete(
        self, binding: str | None, state: str | None, code: str | None, principal: Principal | None
    ) -> Connection | str:
        try:
            return await self.service.complete(binding, state, code, principal=principal)
        except ConnectFailed as exc:
            return str(exc)

    async def disconnect(self, principal: Principal, provider: str) -> int:
        removed = await self.service.disconnect(principal.key, provider)
        await self._tell(principal.key)
        return removed

    @property
    def redirect_uri(self) -> str:
        return self.service.connect_url + CALLBACK_SUFFIX

    # The end of a principal.

    async def key_revoked(self, record: ApiKeyRecord) -> None:
        await self.remove(f"{PrincipalKind.USER.value}:{record.owner}")

    async def agent_revoked(self, record: AgentRecord) -> None:
        await self.remove(f"{PrincipalKind.AGENT.value}:{record.id}")

    async def remove(self, principal: str) -> int:
        removed = await self.service.disconnect(principal)
        await self._tell(principal)
        return removed

    async def _tell(self, principal: str) -> None:
        if self.changes is not None:
            await self.changes.publish(UPSTREAM_GRANTS_REMOVED, {"principal": principal})

    def follow(self, changes: Fanout) -> None:
        changes.subscribe(UPSTREAM_GRANTS_REMOVED, self._on_removed)

    async def _on_removed(self, change: Change) -> None:
        principal = change.payload.get("principal")
        if isinstance(principal, str):
            self.service.forget(principal)
