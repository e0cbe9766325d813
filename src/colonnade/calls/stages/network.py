"""Network policy: the backend must be on the tool's allow-list and on the call's, when it gives one.

A binding this stage cannot check (a kind it does not know where it reaches) is refused: an
unknown reach is never assumed to be allowed. Built-in tools reach no network. A downstream MCP
server over HTTP is checked by its URL's `host:port`. A stdio server is a local process the operator
configured, whose own connections the gateway cannot see: it is named `stdio:<server>`, which its
tools' manifests allow; a caller's `constraints.net_allowlist` must name it (or `stdio`, for every
local server) to let such a call run. Organ functions and pathways run in the gateway's process:
one whose card declares no `network` effect reaches no network by itself and passes like a
built-in; one that declares it reaches hosts the gateway cannot see nor confine, so a call that
restricts the network (`constraints.net_allowlist`) is refused with P-PRECOND-NET-UNCHECKED, and a
call that does not is run as its card declares. A refusal's message does not name the backend;
`details.target` does, since the caller's own `net_allowlist` takes `host:port` entries and fixing
it needs the one that was refused.
"""

from __future__ import annotations

from colonnade.calls.call import Call
from colonnade.calls.call_errors import error
from colonnade.calls.envelope import CallResult
from colonnade.calls.manifest import host_port
from colonnade.calls.pipeline import Next
from colonnade.catalog.bindings import (
    Binding,
    BuiltinBinding,
    HttpBinding,
    McpBinding,
    OrganBinding,
    PathwayBinding,
)

__all__ = ["NetworkPolicy", "allowed", "target_of"]


def allowed(target: str, allowlist: list[str]) -> bool:
    """`host:port` entries; `host` alone allows every port, `*.domain` allows sub-domains."""
    host = target.rsplit(":", 1)[0]
    for entry in allowlist:
        if entry in (target, host) or (entry.startswith("*.") and host.endswith(entry[1:])):
            return True
    return False


def target_of(binding: Binding | None) -> str | None:
    """The `host:port` (or `stdio:<server>`) a binding reaches; None when it cannot be told."""
    if isinstance(binding, HttpBinding):
        return host_port(binding.base_url)
    if isinstance(binding, McpBinding):
        if binding.transport == "stdio":
            return f"stdio:{binding.server}"
        return host_port(binding.url) if binding.url else None
    return None


class NetworkPolicy:
    async def __call__(self, call: Call, next: Next) -> CallResult:
        binding = call.tool.binding
        if isinstance(binding, BuiltinBinding):
            return await next(call)
        if isinstance(binding, OrganBinding | PathwayBinding):
            return await self._in_process(call, next, binding.network)
        target = target_of(binding)
        if target is None:
            kind = binding.kind if binding is not None else "none"
            status, err = error(
                "P-PRECOND-NET-UNCHECKED",
                f"'{call.tool.canonical_name}' has a binding of kind {kind!r}, whose network reach this "
                "gateway cannot check; it was not executed",
                binding=kind,
            )
            return call.result(status, error=err)
        for source, allowlist in (
            ("the tool's manifest", call.manifest.capabilities.net_allowlist),
            ("constraints.net_allowlist", call.request.constraints.net_allowlist),
        ):
            if allowlist is not None and not allowed(target, allowlist):
                status, err = error(
                    "P-PRECOND-NET-DENIED",
                    f"'{call.tool.canonical_name}' calls a backend that {source} does not allow "
                    "(its host:port is details.target)",
                    target=target,
                    net_allowlist=allowlist,
                )
                return call.result(status, error=err)
        return await next(call)

    async def _in_process(self, call: Call, next: Next, network: bool) -> CallResult:
        if network and call.request.constraints.net_allowlist is not None:
            status, err = error(
                "P-PRECOND-NET-UNCHECKED",
                f"'{call.tool.canonical_name}' runs in the gateway's process and reaches the network (its "
                "card says so), which the gateway cannot confine to constraints.net_allowlist; it was not "
                "executed",
                binding=call.tool.binding.kind if call.tool.binding is not None else "none",
            )
            return call.result(status, error=err)
        return await next(call)
