"""Admission at the HTTP edge: count calls in flight, refuse past the bound, tell REST callers when to retry.

The load monitor (`calls/load.py`) needs the number of requests the gateway is working on, from the
moment their headers arrive, not only once they reach the pipeline: under overload the time goes
into the queue in front of it. Each request's arrival is when the server read its first byte
(stamped by the HTTP protocol), so the wait for the loop to reach it counts against its deadline.
Past `max_in_flight`, a call is refused here before its body is read, the cheapest refusal there is:
`503` with `Retry-After`, and the gateway's error body (a CallResult on REST, a JSON-RPC error on
/mcp) with `R-CAP-OVERLOAD` and `retry_after_ms`. A REST CallResult that asks the caller to wait
(`error.details.retry_after_ms`, e.g. a call the admission stage shed for its deadline) also gets a
`Retry-After` header. A client that goes away before its body is complete (or is cut by the body
deadline) has nobody left to answer: that ends its request quietly instead of as an application
error.
"""

from __future__ import annotations

import json
import logging
import math
import uuid
from collections.abc import Collection
from typing import Any

from starlette.datastructures import Headers
from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from colonnade.calls.call_errors import error
from colonnade.calls.envelope import ENVELOPE_VERSION_HEADER, CallResult, EnvelopeVersion
from colonnade.calls.envelope_v1 import rendered
from colonnade.calls.load import ARRIVAL, IN_FLIGHT_LIMIT, READ_MARK, RECEIVED_AT, LoadMonitor

__all__ = ["CALL_PATHS", "AdmissionControl", "retry_after_header"]

logger = logging.getLogger(__name__)

CALL_PATHS = frozenset({"/mcp", "/v1/calls", "/v1/calls/commit", "/v1/calls/discard"})
_REST_PREFIX = "/v1/"
_RETRYABLE = b'"retryable_error"'


class AdmissionControl:
    """Wraps the gateway's ASGI app; only POSTs to the call paths are counted and may be refused."""

    def __init__(self, app: ASGIApp, load: LoadMonitor, *, paths: Collection[str] = CALL_PATHS) -> None:
        self.app = app
        self.load = load
        self.paths = frozenset(paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and _read_by_protocol(scope):
            self.load.request_started()
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] not in self.paths:
            await self.app(scope, receive, send)
            return
        load = self.load
        arrival = load.edge_entered(_received_at(scope))
        if load.over_bound():
            load.edge_left(arrival, served=False)
            load.record_shed(IN_FLIGHT_LIMIT)
            await _refuse(scope, load, send)
            return
        rest = scope["path"].startswith(_REST_PREFIX)
        token = ARRIVAL.set(arrival)
        try:
            await self.app(scope, receive, _RetryAfter(send) if rest else send)
        except ClientDisconnect:
            logger.info("a client went away before its request body was complete")
        finally:
            ARRIVAL.reset(token)
            load.edge_left(arrival)


class _RetryAfter:
    """Holds the response start until the (single) body arrives, to add Retry-After when it asks to wait."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self._start: Message | None = None

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self._start = message
            return
        start, self._start = self._start, None
        if start is not None:
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                start = _with_retry_after(start, message.get("body", b""))
            await self._send(start)
        await self._send(message)


def _read_by_protocol(scope: Scope) -> bool:
    """Whether the HTTP protocol counted this request as read and waiting (once: the mark is taken)."""
    state = scope.get("state")
    return isinstance(state, dict) and state.pop(READ_MARK, None) is not None


def _received_at(scope: Scope) -> float | None:
    """When the server read the request's first byte (the HTTP protocol's stamp), if it says."""
    state = scope.get("state")
    received = state.get(RECEIVED_AT) if isinstance(state, dict) else None
    return received if isinstance(received, float) else None


def _with_retry_after(start: Message, body: bytes) -> Message:
    if _RETRYABLE not in body or any(name == b"retry-after" for name, _ in start.get("headers", [])):
        return start
    try:
        details = json.loads(body)["error"]["details"]
    except (ValueError, KeyError, TypeError):
        return start
    wait_ms = details.get("retry_after_ms") if isinstance(details, dict) else None
    if not isinstance(wait_ms, int | float) or isinstance(wait_ms, bool):
        return start
    headers = [*start.get("headers", []), (b"retry-after", retry_after_header(wait_ms))]
    return {**start, "headers": headers}


def retry_after_header(wait_ms: float) -> bytes:
    """`Retry-After` in whole seconds (HTTP has no finer unit), at least 1."""
    return str(max(1, math.ceil(wait_ms / 1000))).encode()


def _asked_version(scope: Scope) -> EnvelopeVersion:
    """The envelope version a REST caller asked for (version 1 unless it asked for 2, as `/v1/calls`)."""
    return 2 if Headers(scope=scope).get(ENVELOPE_VERSION_HEADER, "").strip() == "2" else 1


async def _refuse(scope: Scope, load: LoadMonitor, send: Send) -> None:
    path = scope["path"]
    wait_ms = load.retry_after_ms()
    status, err = error(
        "R-CAP-OVERLOAD",
        f"the gateway already has {load.max_in_flight} calls in flight",
        reason=IN_FLIGHT_LIMIT,
        retry_after_ms=wait_ms,
        in_flight=load.in_flight,
        max_in_flight=load.max_in_flight,
    )
    body: Any
    if path.startswith(_REST_PREFIX):
        refused = CallResult(call_id=str(uuid.uuid4()), status=status, error=err)
        body = rendered(refused, _asked_version(scope))
    else:  # JSON-RPC: the request's id is unknown, its body unread
        rpc_error = {"code": -32000, "message": err.message, "data": err.model_dump()}
        body = {"jsonrpc": "2.0", "id": None, "error": rpc_error}
    content = json.dumps(body, separators=(",", ":")).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 503,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(content)).encode()),
                (b"retry-after", retry_after_header(wait_ms)),
            ],
        }
    )
    await send({"type": "http.response.body", "body": content})
