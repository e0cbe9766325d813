"""Contract tools over HTTP: the `http` kind of the adapter registry, on top of `HttpAdapter`.

`HttpAdapter` speaks HTTP (a binding, arguments, headers); this adapts an `Invocation` to it,
forwarding the caller's scoped idempotency key as `Idempotency-Key` so that a backend can
recognise a retry of a call it may already have executed. Whether it does is the contract's
word (`runtime.deduplicates_idempotency_key`); only then may a keyed request be sent again.
When the call records spans, the request gets a client span of its own (semantic conventions for
HTTP: method, URL template, server, status; never the URL, which carries argument values) and
carries it as W3C `traceparent`/`tracestate`, so the backend continues the caller's trace.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from opentelemetry.trace import SpanKind, StatusCode

from colonnade.adapters.credentials import CredentialRefused, UpstreamCredentials, UpstreamGrant, refused
from colonnade.adapters.http import HttpAdapter
from colonnade.adapters.outcome import MISCONFIGURED, AdapterOutcome, OutcomeKind
from colonnade.adapters.registry import Invocation
from colonnade.catalog.http_binding import HttpBinding
from colonnade.contracts.model import BackendAuth
from colonnade.observability.tracing import io_span, trace_headers

__all__ = ["IDEMPOTENCY_HEADER", "HttpTools"]

IDEMPOTENCY_HEADER = "Idempotency-Key"


class HttpTools:
    def __init__(self, http: HttpAdapter, credentials: UpstreamCredentials | None = None) -> None:
        self.http = http
        self.credentials = credentials if credentials is not None else UpstreamCredentials()

    async def execute(self, invocation: Invocation) -> AdapterOutcome:
        binding = invocation.tool.binding
        if not isinstance(binding, HttpBinding):
            return AdapterOutcome(
                OutcomeKind.TERMINAL_ERROR,
                error_code=MISCONFIGURED,
                message=f"'{invocation.tool.canonical_name}' has no HTTP binding",
            )
        grant: UpstreamGrant | None = None
        if binding.auth is not None and not isinstance(binding.auth, BackendAuth):
            try:
                grant = await self.credentials.grant(binding.auth, invocation.principal)
            except CredentialRefused as exc:
                return refused(exc)
        key = invocation.idempotency_key
        headers = {IDEMPOTENCY_HEADER: key} if key is not None else {}
        with io_span(
            f"{binding.method} {binding.path}", _client_attributes(binding), kind=SpanKind.CLIENT
        ) as span:
            outcome = await self.http.execute(
                binding,
                invocation.arguments,
                timeout_s=invocation.timeout_s,
                headers=headers | trace_headers() if span is not None else headers or None,
                deduplicated=invocation.tool.runtime.deduplicates_idempotency_key,
                grant=grant,
            )
            if span is not None:
                if outcome.status_code is not None:
                    span.set_attribute("http.response.status_code", outcome.status_code)
                if not outcome.ok:
                    span.set_attribute("error.type", outcome.error_code or str(outcome.status_code))
                    span.set_status(StatusCode.ERROR)
        return outcome

    async def aclose(self) -> None:
        await self.http.aclose()


def _client_attributes(binding: HttpBinding) -> dict[str, Any]:
    url = urlsplit(binding.base_url)
    attributes: dict[str, Any] = {"http.request.method": binding.method, "url.template": binding.path}
    if url.hostname:
        attributes["server.address"] = url.hostname
    port = url.port or {"http": 80, "https": 443}.get(url.scheme)
    if port is not None:
        attributes["server.port"] = port
    return attributes
