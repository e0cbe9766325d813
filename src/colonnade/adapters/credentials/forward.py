"""Mode `forward`: the caller's own token goes upstream, only when its `aud` names that upstream.

A token issued for the gateway alone is refused rather than replayed: an upstream that accepted
it would accept it from anyone the gateway forwards to.
"""

from __future__ import annotations

import time

from colonnade.adapters.credentials.grant import CredentialRefused, UpstreamGrant
from colonnade.governance.principal import CallerToken

__all__ = ["AUDIENCE", "SUBJECT", "forwarded", "live_token"]

AUDIENCE = "A-AUTH-UPSTREAM-AUDIENCE"
SUBJECT = "A-AUTH-UPSTREAM-SUBJECT"


def live_token(caller: CallerToken | None, mode: str) -> CallerToken:
    """The caller's token when it is there and unexpired now (it may have expired since it was
    checked at the edge, e.g. while the call waited); refused otherwise, before any upstream call."""
    if caller is None:
        raise CredentialRefused(
            SUBJECT, f"this upstream's credential mode is {mode}: call with your own bearer token (a JWT)"
        )
    if caller.expires_at <= time.time():
        raise CredentialRefused(SUBJECT, "your token has expired; get a new one from your issuer")
    return caller


def forwarded(caller: CallerToken | None, audience: str) -> UpstreamGrant:
    token = live_token(caller, "forward")
    if audience not in token.audiences:
        raise CredentialRefused(
            AUDIENCE, f"your token's aud does not name this upstream ({audience!r}), so it is not forwarded"
        )
    return UpstreamGrant("forward", token.subject, token.token)
