"""Where the gateway may listen, and under which name it is a protected resource.

Without authentication the gateway answers anyone who reaches its port, so it may only listen on
loopback then: binding any other address refuses to start. With authentication, tokens must be
issued for the gateway's resource URL (their audience): `auth.resource`, or by default the MCP
endpoint on the bound loopback address; a gateway bound to every interface must be told its
public URL.
"""

from __future__ import annotations

import ipaddress

from colonnade.config import Settings
from colonnade.errors import ColonnadeError

__all__ = ["AuthConfigError", "AuthNotConfigured", "is_loopback", "refuse_unprotected_bind", "resource_url"]


class AuthNotConfigured(ColonnadeError):
    code = "A-AUTH-NOT-CONFIGURED"


class AuthConfigError(ColonnadeError):
    code = "A-AUTH-CONFIG"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def refuse_unprotected_bind(settings: Settings) -> None:
    host = settings.server.host
    if not settings.auth.configured and not is_loopback(host):
        raise AuthNotConfigured(
            f"refusing to listen on {host}: without authentication the gateway serves loopback only; "
            "configure auth.issuers (or auth.enabled with API keys), or bind 127.0.0.1"
        )


def resource_url(settings: Settings) -> str:
    """The gateway's resource URL: the audience its tokens must carry."""
    if settings.auth.resource:
        return settings.auth.resource
    host = settings.server.host
    if not is_loopback(host):
        raise AuthConfigError(
            f"the gateway listens on {host}: set auth.resource to the URL clients use (e.g. "
            "https://gateway.example.com/mcp), the audience of its tokens"
        )
    shown = f"[{host}]" if ":" in host else host
    return f"{settings.server.scheme}://{shown}:{settings.server.port}/mcp"
