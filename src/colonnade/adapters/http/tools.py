"""Contract tools over HTTP: the `http` kind of the adapter registry, on top of `HttpAdapter`.

`HttpAdapter` speaks HTTP (a binding, arguments, headers); this adapts an `Invocation` to it,
forwarding the caller's scoped idempotency key as `Idempotency-Key` so that a backend can
recognise a retry of a call it may already have executed. Whether it does is the contract's
word (`runtime.deduplicates_idempotency_key`); only then may a keyed request be sent again.
"""

from __future__ import annotations

from colonnade.adapters.http import HttpAdapter
from colonnade.adapters.outcome import MISCONFIGURED, AdapterOutcome, OutcomeKind
from colonnade.adapters.registry import Invocation
from colonnade.catalog.http_binding import HttpBinding

__all__ = ["IDEMPOTENCY_HEADER", "HttpTools"]

IDEMPOTENCY_HEADER = "Idempotency-Key"


class HttpTools:
    def __init__(self, http: HttpAdapter) -> None:
        self.http = http

    async def execute(self, invocation: Invocation) -> AdapterOutcome:
        binding = invocation.tool.binding
        if not isinstance(binding, HttpBinding):
            return AdapterOutcome(
                OutcomeKind.TERMINAL_ERROR,
                error_code=MISCONFIGURED,
                message=f"'{invocation.tool.canonical_name}' has no HTTP binding",
            )
        key = invocation.idempotency_key
        headers = {IDEMPOTENCY_HEADER: key} if key is not None else None
        return await self.http.execute(
            binding,
            invocation.arguments,
            timeout_s=invocation.timeout_s,
            headers=headers,
            deduplicated=invocation.tool.runtime.deduplicates_idempotency_key,
        )

    async def aclose(self) -> None:
        await self.http.aclose()
