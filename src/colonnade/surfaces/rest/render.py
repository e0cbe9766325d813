"""JSON responses of the REST surface: CallResults and typed error bodies that always serialize.

A backend may hand the gateway strings JSON text cannot carry as UTF-8 (lone surrogates from
`\\ud800` escapes); those fall back to ASCII-escaped JSON instead of failing the response.
A CallResult that counted under rate limits carries them in the IETF draft's fields
(draft-ietf-httpapi-ratelimit-headers): `RateLimit-Policy` (each limit's quota `q`, window `w`)
and `RateLimit` (remaining `r`, seconds to reset `t`); one that asks to wait, `Retry-After`.

A CallResult is rendered in the envelope version the caller chose (`envelope_version` in the body,
else the `Colonnade-Envelope-Version` header), version 1 when it chose none.
"""

from __future__ import annotations

import json
import math
from typing import Any

from pydantic_core import PydanticSerializationError, to_json, to_jsonable_python
from starlette.datastructures import Headers
from starlette.responses import Response

from colonnade.calls.call_errors import spec_for
from colonnade.calls.envelope import (
    ENVELOPE_VERSION_HEADER,
    ENVELOPE_VERSIONS,
    CallError,
    CallResult,
    EnvelopeVersion,
)
from colonnade.calls.envelope_v1 import v1_document
from colonnade.governance.limits import LimitUsage
from colonnade.surfaces.envelope_parsing import EnvelopeRejection

__all__ = [
    "DEFAULT_ENVELOPE_VERSION",
    "JSON_MEDIA_TYPE",
    "error_body",
    "error_response",
    "header_version",
    "json_response",
    "result_response",
]

JSON_MEDIA_TYPE = "application/json"
DEFAULT_ENVELOPE_VERSION: EnvelopeVersion = 1
"""What a REST caller that does not ask gets: the four outcomes of the first envelope."""


def header_version(headers: Headers) -> EnvelopeVersion | EnvelopeRejection | None:
    """The version the `Colonnade-Envelope-Version` header asks for, None without one, or why it is wrong."""
    raw = headers.get(ENVELOPE_VERSION_HEADER)
    if raw is None:
        return None
    value = raw.strip()
    if value == "1":
        return 1
    if value == "2":
        return 2
    allowed = " or ".join(str(v) for v in ENVELOPE_VERSIONS)
    return EnvelopeRejection(
        code="I-REQ-ENVELOPE",
        message=f"header {ENVELOPE_VERSION_HEADER} must be {allowed} (got {value[:40]!r})",
        http_status=400,
        details={"header": ENVELOPE_VERSION_HEADER, "allowed": list(ENVELOPE_VERSIONS)},
    )


def result_response(
    result: CallResult, status_code: int = 200, *, version: EnvelopeVersion, tool_id: str = ""
) -> Response:
    """The CallResult in full (null fields included) in envelope `version`, so every response of a
    version has the same shape; `tool_id` is the name asked for (version 1's provenance)."""
    body = _v2_body(result) if version == 2 else _v1_body(result, tool_id)
    return Response(body, status_code=status_code, media_type=JSON_MEDIA_TYPE, headers=_headers(result))


def _v2_body(result: CallResult) -> bytes:
    try:
        return result.model_dump_json().encode("utf-8")
    except PydanticSerializationError:
        return _encode(result.model_dump(mode="json"))


def _v1_body(result: CallResult, tool_id: str) -> bytes:
    document = v1_document(result, tool_id=tool_id)
    try:
        return to_json(document)
    except PydanticSerializationError:
        return _encode(to_jsonable_python(document))


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
