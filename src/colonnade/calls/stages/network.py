"""Network policy: the backend must be on the tool's allow-list and on the call's, when it gives one.

A binding this stage cannot check (a kind it does not know where it reaches) is refused: an
unknown reach is never assumed to be allowed. Built-in tools reach no network. A refusal's message
does not name the backend; `details.target` does, since the caller's own `net_allowlist` takes
`host:port` entries and fixing it needs the one that was refused.
"""

from __future__ import annotations

from colonnade.calls.call import Call
from colonnade.calls.call_errors import error
from colonnade.calls.envelope import CallResult
from colonnade.calls.manifest import host_port
from colonnade.calls.pipeline import Next
from colonnade.catalog.bindings import BuiltinBinding, HttpBinding

__all__ = ["NetworkPolicy", "allowed"]


def allowed(target: str, allowlist: list[str]) -> bool:
    """`host:port` entries; `host` alone allows every port, `*.domain` allows sub-domains."""
    host = target.rsplit(":", 1)[0]
    for entry in allowlist:
        if entry in (target, host) or (entry.startswith("*.") and host.endswith(entry[1:])):
            return True
    return False


class NetworkPolicy:
    async def __call__(self, call: Call, next: Next) -> CallResult:
        binding = call.tool.binding
        if isinstance(binding, BuiltinBinding):
            return await next(call)
        if not isinstance(binding, HttpBinding):
            kind = binding.kind if binding is not None else "none"
            status, err = error(
                "P-PRECOND-NET-UNCHECKED",
                f"'{call.tool.canonical_name}' has a binding of kind {kind!r}, whose network reach this "
                "gateway cannot check; it was not executed",
                binding=kind,
            )
            return call.result(status, error=err)
        target = host_port(binding.base_url)
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
