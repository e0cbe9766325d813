"""An MCP `tools/call` as a call envelope: the tool and arguments, plus what the client put in `_meta`.

Shared by `/mcp` and the per-server endpoints, so a client's envelope fields mean the same on both.
The caller's W3C trace context comes from the nearest place that names it: the envelope's own
`context`, then `_meta`'s `traceparent`, then the HTTP request's `traceparent` header (what an
instrumented HTTP client or a proxy in front adds to every request it sends).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from colonnade.calls.envelope import (
    APPROVAL_TOKEN_META_KEY,
    DRY_RUN_META_KEY,
    ENVELOPE_VERSION_META_KEY,
    REQUEST_META_KEY,
    CallContext,
    CallRequest,
)
from colonnade.observability.tracing import caller_trace_fields
from colonnade.surfaces.envelope_parsing import EnvelopeRejection, validate_envelope

__all__ = ["call_request"]


def call_request(
    name: str,
    arguments: dict[str, Any],
    meta: dict[str, Any],
    headers: Mapping[str, str] | None = None,
) -> CallRequest | EnvelopeRejection:
    """MCP's tool name and arguments, plus any envelope fields the client sent in `_meta`.

    `_meta["colonnade/request"]` may carry `call_id`, `tool_version`, `context`, `constraints`
    (timeout, deadline, idempotency key, retry policy, allow-list), `provenance`, `dry_run`,
    `approval_token` and `envelope_version`; without it the call gets the defaults (fresh call_id
    and trace_id, the tool's timeout). `_meta["colonnade/approval_token"]` carries an approval's
    token on its own, `_meta["colonnade/envelope_version"]` the envelope version of the answer's
    `_meta` (1 or 2). A W3C `traceparent` (and `tracestate`) in `_meta` makes the call continue the
    caller's trace, unless the envelope's `context` names a parent span itself; without a valid one
    there, the HTTP request's `traceparent`/`tracestate` `headers` (none over stdio) do.
    """
    traced = caller_trace(meta, headers)
    envelope = meta.get(REQUEST_META_KEY)
    token = meta.get(APPROVAL_TOKEN_META_KEY)
    version = meta.get(ENVELOPE_VERSION_META_KEY)
    if envelope is None and version is None and (token is None or isinstance(token, str)):
        return CallRequest(
            tool_id=name,
            input=arguments,
            context=CallContext(**traced),
            dry_run=bool(meta.get(DRY_RUN_META_KEY)),
            approval_token=token,
        )
    if envelope is None:
        envelope = {}
    if not isinstance(envelope, dict):
        envelope = {"_": envelope}  # reported as an unknown field, with the rest of the checks
    fields = {"dry_run": bool(meta.get(DRY_RUN_META_KEY)), **envelope, "tool_id": name, "input": arguments}
    context = fields.get("context", {})
    if traced and isinstance(context, dict) and "parent_span_id" not in context:
        fields["context"] = {**context, **traced}
    if token is not None:
        fields["approval_token"] = token
    if version is not None:
        fields["envelope_version"] = version
    return validate_envelope(fields, CallRequest, prefix="/_meta/colonnade~1request")


def caller_trace(meta: Mapping[str, Any], headers: Mapping[str, str] | None) -> dict[str, Any]:
    """The caller's trace fields: `_meta`'s W3C context wins over the HTTP headers' (it names this
    call; a header may be a whole connection's). A `tracestate` travels only with its own
    `traceparent`, never one source's state on the other's parent."""
    traced = caller_trace_fields(meta.get("traceparent"), meta.get("tracestate"))
    if traced or headers is None:
        return traced
    return caller_trace_fields(headers.get("traceparent"), headers.get("tracestate"))
