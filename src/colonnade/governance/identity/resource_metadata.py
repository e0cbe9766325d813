"""The MCP authorization spec's discovery: protected resource metadata (RFC 9728) and challenges.

A client refused with 401 reads `WWW-Authenticate: Bearer resource_metadata="..."`, fetches that
document, learns which authorization servers issue tokens for this gateway and which scopes
exist, gets a token for the resource, and retries (RFC 6750, RFC 9728 section 5.1).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from colonnade.governance.identity.dpop import DPOP_ALGORITHMS
from colonnade.governance.identity.failures import AuthFailure
from colonnade.governance.personas import Scope

__all__ = ["WELL_KNOWN", "challenge", "metadata_path", "metadata_url", "protected_resource_metadata"]

WELL_KNOWN = "/.well-known/oauth-protected-resource"


def metadata_path(resource: str) -> str:
    """Where the metadata of `resource` lives on its host: the well-known prefix plus its path."""
    path = urlsplit(resource).path.rstrip("/")
    return WELL_KNOWN + path


def metadata_url(resource: str) -> str:
    parts = urlsplit(resource)
    return f"{parts.scheme}://{parts.netloc}{metadata_path(resource)}"


def protected_resource_metadata(
    resource: str, issuers: Sequence[str], *, certificate_bound: bool = False
) -> dict[str, Any]:
    """The RFC 9728 document; only issuers that are URLs are listed (the development one is not).

    `certificate_bound`: the gateway asks for client certificates, so it accepts mTLS-bound tokens
    (RFC 8705); the document says so (`tls_client_certificate_bound_access_tokens`).
    """
    document: dict[str, Any] = {
        "resource": resource,
        "bearer_methods_supported": ["header"],
        "scopes_supported": [scope.value for scope in Scope],
        "dpop_signing_alg_values_supported": list(DPOP_ALGORITHMS),
        "resource_name": "Colonnade gateway",
    }
    if certificate_bound:
        document["tls_client_certificate_bound_access_tokens"] = True
    servers = [issuer for issuer in issuers if issuer.startswith(("https://", "http://"))]
    if servers:
        document["authorization_servers"] = servers
    return document


def challenge(failure: AuthFailure, resource: str) -> dict[str, str]:
    """The `WWW-Authenticate` header of a refusal: where the metadata is, and what went wrong."""
    params = [f'resource_metadata="{metadata_url(resource)}"']
    if failure.oauth_error is not None:
        params.append(f'error="{failure.oauth_error}"')
        description = failure.message.replace("\\", "").replace('"', "'")
        params.append(f'error_description="{description}"')
    required = failure.details.get("required")
    if isinstance(required, str):
        params.append(f'scope="{required}"')
    value = "Bearer " + ", ".join(params)
    return {"WWW-Authenticate": f'{value}, DPoP algs="{" ".join(DPOP_ALGORITHMS)}"'}
