"""Upstream credentials by mode: the gateway's own secret, the caller's token, an exchanged one,
or each user's own grant (user_oauth).

`static` stays where it always was (a secret's name resolved into a header by each adapter);
`forward` and `exchange` act on the caller's behalf and are decided per call here, so that both
the HTTP and the MCP adapter send the same credential for the same caller and audience.
"""

from colonnade.adapters.credentials.exchange import TokenExchange
from colonnade.adapters.credentials.forward import forwarded
from colonnade.adapters.credentials.grant import CredentialRefused, UpstreamGrant, refused
from colonnade.adapters.credentials.upstream import UpstreamCredentials
from colonnade.adapters.credentials.user_oauth import Authorization, ConnectFailed, Connection, UserOAuth

__all__ = [
    "Authorization",
    "ConnectFailed",
    "Connection",
    "CredentialRefused",
    "TokenExchange",
    "UpstreamCredentials",
    "UpstreamGrant",
    "UserOAuth",
    "forwarded",
    "refused",
]
