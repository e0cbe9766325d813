"""The per-call credential of an upstream whose mode acts on the caller's behalf."""

from __future__ import annotations

from colonnade.adapters.credentials.exchange import TokenExchange
from colonnade.adapters.credentials.forward import forwarded
from colonnade.adapters.credentials.grant import CredentialRefused, UpstreamGrant
from colonnade.adapters.credentials.user_oauth import UserOAuth
from colonnade.config import ExchangeCredential, ForwardCredential, UserOAuthCredential
from colonnade.governance.principal import Principal, PrincipalKind

__all__ = ["UpstreamCredentials"]

_MISCONFIGURED = "S-TOOL-CONFIG"


class UpstreamCredentials:
    """Forward, exchange or user_oauth, one instance per gateway (shared by the HTTP and MCP adapters)."""

    def __init__(self, exchange: TokenExchange | None = None, user_oauth: UserOAuth | None = None) -> None:
        self.exchange = exchange
        self.user_oauth = user_oauth

    async def grant(
        self, spec: ForwardCredential | ExchangeCredential | UserOAuthCredential, principal: Principal
    ) -> UpstreamGrant:
        if isinstance(spec, ForwardCredential):
            return forwarded(principal.caller_token, spec.audience)
        if isinstance(spec, UserOAuthCredential):
            if self.user_oauth is None:
                raise CredentialRefused(
                    _MISCONFIGURED,
                    "this upstream's credential mode is user_oauth but the gateway keeps no grants "
                    "(it needs a database and an `upstream_oauth:` section)",
                )
            return await self.user_oauth.grant(spec, principal)
        if self.exchange is None:
            raise CredentialRefused(
                _MISCONFIGURED,
                "this upstream's credential mode is exchange but colonnade.yaml has no `token_exchange:` "
                "section (token_endpoint, client_id, client_secret)",
            )
        agent = principal.id if principal.kind is PrincipalKind.AGENT else None
        return await self.exchange.grant(principal.caller_token, spec, agent=agent)

    async def aclose(self) -> None:
        if self.exchange is not None:
            await self.exchange.aclose()
        if self.user_oauth is not None:
            await self.user_oauth.aclose()
