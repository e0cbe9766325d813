"""Colonnade: a gateway that makes APIs and MCP servers safe and easy for AI agents to use.

The public face for programs that embed the gateway:

    from colonnade import CallRequest, Gateway, load_settings

    gateway = await Gateway.open(load_settings("colonnade.yaml"))
    result = await gateway.calls.call(CallRequest(tool_id="acme:crm:get_customer", input={...}))
    app = gateway.http_app()  # an ASGI app: MCP at /mcp, REST at /v1, pages at /ui
    await gateway.aclose()

Names are loaded on first use, so `import colonnade` stays cheap and modules deeper in the
package can import `colonnade.__version__` without cycles (it lives in `colonnade._version`).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from colonnade._version import __version__

_PUBLIC = {
    "CallRequest": "colonnade.calls.envelope",
    "CallResult": "colonnade.calls.envelope",
    "CallStatus": "colonnade.calls.envelope",
    "ColonnadeError": "colonnade.errors",
    "Contract": "colonnade.contracts.model",
    "Gateway": "colonnade.runtime.gateway",
    "Principal": "colonnade.governance.principal",
    "Settings": "colonnade.config",
    "Tool": "colonnade.catalog.tool",
    "load_settings": "colonnade.config",
}

__all__ = [
    "CallRequest",
    "CallResult",
    "CallStatus",
    "ColonnadeError",
    "Contract",
    "Gateway",
    "Principal",
    "Settings",
    "Tool",
    "__version__",
    "load_settings",
]

if TYPE_CHECKING:
    from colonnade.calls.envelope import CallRequest, CallResult, CallStatus
    from colonnade.catalog.tool import Tool
    from colonnade.config import Settings, load_settings
    from colonnade.contracts.model import Contract
    from colonnade.errors import ColonnadeError
    from colonnade.governance.principal import Principal
    from colonnade.runtime.gateway import Gateway


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'colonnade' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value
