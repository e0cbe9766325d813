"""JSON responses of the REST surface: CallResults and typed error bodies that always serialize.

A backend may hand the gateway strings JSON text cannot carry as UTF-8 (lone surrogates from
`\\ud800` escapes); those fall back to ASCII-escaped JSON instead of failing the response.
A CallResult that counted under rate limits carries them in the IETF draft's fields
(draft-ietf-httpapi-ratelimit-headers): `RateLimit-Policy` (each limit's quota `q`, window `w`)
and `RateLimit` (remaining `r`, seconds to reset `t`); one that asks to wait, `Retry-After`.
"""

from __future__ import annotations

import json
import math
from typing import Any

from pydantic_core import PydanticSerializationError
from starlette.responses import Response

from colonnade.calls.call_errors import spec_for
from colonnade.calls.envelope import CallError, CallResult
from colonnade.governance.limits import LimitUsage

__all__ = ["JSON_MEDIA_TYPE", "error_body", "error_response", "json_response", "result_response"]

JSON_MEDIA_TYPE = "application/json"


def result_response(result: CallResult, status_code: int = 200) -> Response:
    """The CallResult in full (null fields included), so every response has the same shape."""
    try:
        body = result.model_dump_json().encode("utf-8")
    except PydanticSerializationError:
        body = _encode(result.model_dump(mode="json"))
    return Response(body, status_code=status_code, media_type=JSON_MEDIA_TYPE, headers=_headers(result))


def _headers(result: CallResult) -> dict[str, str] | None:
    """`Retry-After` when the result asks to wait; the RateLimit fields when it counted under limits."""
    headers: dict[str, str] = {}
    details = result.error.details if result.error is not None else None
    wait_ms = details.get("retry_after_ms") if details else None
    if isinstance(wait_ms, int | float) and not isinstance(wait_ms, bool):
        headers["retry-after"] = str(max(1, math.ceil(wait_ms / 1000)))
    limits = result.handover.limits
    if limits:
        refused = details.get("limit_name") if details else None
        headers["ratelimit-policy"] = ", ".join(_policy(usage) for usage in limits)
        headers["ratelimit"] = ", ".join(
            _remaining(usage, wait_ms if usage.name == refused else None) for usage in limits
        )
    return headers or None


def _policy(usage: LimitUsage) -> str:
    if usage.window_s is None:
        return f'{_sf_string(usage.name)};q={usage.limit};qu="concurrent-requests"'
    return f"{_sf_string(usage.name)};q={usage.limit};w={max(1, round(usage.window_s))}"


def _remaining(usage: LimitUsage, wait_ms: Any) -> str:
    """`r` calls left; `t` seconds until a window frees room (a slot frees when any call ends: no `t`)."""
    if isinstance(wait_ms, int | float):
        return f"{_sf_string(usage.name)};r=0;t={max(1, math.ceil(wait_ms / 1000))}"
    if usage.window_s is None:
        return f"{_sf_string(usage.name)};r={usage.remaining}"
    return f"{_sf_string(usage.name)};r={usage.remaining};t={math.ceil(usage.reset_s)}"


def _sf_string(text: str) -> str:
    """A structured-field string (RFC 8941): printable ASCII, quotes and backslashes escaped."""
    printable = "".join(c if " " <= c <= "~" else "?" for c in text)
    return '"' + printable.replace("\\", "\\\\").replace('"', '\\"') + '"'


def json_response(payload: Any, status_code: int = 200) -> Response:
    return Response(_encode(payload), status_code=status_code, media_type=JSON_MEDIA_TYPE)


def error_body(code: str, message: str, **details: Any) -> dict[str, Any]:
    """`{"error": {code, message, details, fix}}` for requests that are not calls (catalog reads)."""
    spec = spec_for(code)
    return {"error": CallError(code=spec.code, message=message, details=details, fix=spec.fix).model_dump()}


def error_response(code: str, message: str, status_code: int, **details: Any) -> Response:
    return json_response(error_body(code, message, **details), status_code)


def _encode(payload: Any) -> bytes:
    try:
        text = json.dumps(payload, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(payload, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii")
