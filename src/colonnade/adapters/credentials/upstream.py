"""The per-call credential of an upstream whose mode acts on the caller's behalf."""

from __future__ import annotations

from colonnade.adapters.credentials.exchange import TokenExchange
from colonnade.adapters.credentials.forward import forwarded
from colonnade.adapters.credentials.grant import CredentialRefused, UpstreamGrant
from colonnade.config import ExchangeCredential, ForwardCredential
from colonnade.governance.principal import Principal

__all__ = ["UpstreamCredentials"]

_MISCONFIGURED = "S-TOOL-CONFIG"


class UpstreamCredentials:
    """Forward or exchange, one instance per gateway (shared by the HTTP and MCP adapters)."""

    def __init__(self, exchange: TokenExchange | None = None) -> None:
        self.exchange = exchange

    async def grant(
        self, spec: ForwardCredential | ExchangeCredential, principal: Principal
    ) -> UpstreamGrant:
        if isinstance(spec, ForwardCredential):
            return forwarded(principal.caller_token, spec.audience)
        if self.exchange is None:
            raise CredentialRefused(
                _MISCONFIGURED,
                "this upstream's credential mode is exchange but colonnade.yaml has no `token_exchange:` "
                "section (token_endpoint, client_id, client_secret)",
            )
        return await self.exchange.grant(principal.caller_token, spec)

    async def aclose(self) -> None:
        if self.exchange is not None:
            await self.exchange.aclose()
