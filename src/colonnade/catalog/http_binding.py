"""How a contract operation maps onto an HTTP request; built once at projection time.

Where each argument goes is the contract's business (`contracts/param_location.py`); the binding
adds what the HTTP adapter needs besides: the backend's base URL, auth, timeout and how the body is
encoded (`body_media_type`: JSON, form fields or multipart parts).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from colonnade.contracts.model import BackendCredential, BodyMediaType, Operation
from colonnade.contracts.param_location import ParamLocation, ParamSpec, placements

__all__ = ["HttpBinding", "ParamLocation", "ParamSpec", "binding_for"]


@dataclass(frozen=True, slots=True)
class HttpBinding:
    """Everything the HTTP adapter needs to execute one operation; no governance here."""

    base_url: str
    method: str
    path: str
    params: tuple[ParamSpec, ...] = ()
    auth: BackendCredential | None = None
    timeout_ms: int | None = None
    body_media_type: str = BodyMediaType.JSON.value
    extra: dict[str, Any] = field(default_factory=dict)
    kind: Literal["http"] = "http"
    tenant: str | None = None
    """The contract's tenant: whose scope the backend's stored secret is read in."""

    def param(self, name: str) -> ParamSpec | None:
        for spec in self.params:
            if spec.name == name:
                return spec
        return None


def binding_for(operation: Operation) -> HttpBinding:
    """Derive the binding of an operation from its backend, path, method and input schema.

    An endpoint's own `backend_url` takes the place of the contract's `backend.base_url`.
    """
    backend = operation.contract.backend
    return HttpBinding(
        base_url=(operation.endpoint.backend_url or backend.base_url).rstrip("/"),
        method=operation.method,
        path=operation.endpoint.path,
        params=placements(operation),
        auth=backend.auth,
        timeout_ms=backend.timeout_ms,
        body_media_type=operation.endpoint.effective_body_media_type.value,
        tenant=operation.contract.tenant,
    )
