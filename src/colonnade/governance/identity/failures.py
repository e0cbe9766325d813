"""`AuthFailure`: why a request's credential was refused, as the HTTP edge answers it.

Every failure has a registry code (`A-AUTH-*`) and the OAuth error the `WWW-Authenticate`
challenge carries (RFC 6750: `invalid_token`, or `insufficient_scope` for a valid credential that
is not enough; none when no credential was sent at all).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["AuthFailure", "insufficient_scope", "invalid"]


@dataclass(frozen=True, slots=True)
class AuthFailure:
    code: str
    message: str
    status: int = 401
    oauth_error: str | None = "invalid_token"
    details: dict[str, Any] = field(default_factory=dict)


def invalid(code: str, message: str, **details: Any) -> AuthFailure:
    """A credential that cannot be accepted: 401 with `invalid_token`."""
    return AuthFailure(code, message, 401, "invalid_token", details)


def insufficient_scope(message: str, scope: str) -> AuthFailure:
    """A good credential without the scope a route needs: 403 with `insufficient_scope`."""
    return AuthFailure("A-AUTH-SCOPE", message, 403, "insufficient_scope", {"required": scope})
