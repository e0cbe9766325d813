"""JSON responses of the REST surface: CallResults and typed error bodies that always serialize.

A backend may hand the gateway strings JSON text cannot carry as UTF-8 (lone surrogates from
`\\ud800` escapes); those fall back to ASCII-escaped JSON instead of failing the response.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic_core import PydanticSerializationError
from starlette.responses import Response

from colonnade.calls.call_errors import spec_for
from colonnade.calls.envelope import CallError, CallResult

__all__ = ["JSON_MEDIA_TYPE", "error_body", "error_response", "json_response", "result_response"]

JSON_MEDIA_TYPE = "application/json"


def result_response(result: CallResult, status_code: int = 200) -> Response:
    """The CallResult in full (null fields included), so every response has the same shape."""
    try:
        body = result.model_dump_json().encode("utf-8")
    except PydanticSerializationError:
        body = _encode(result.model_dump(mode="json"))
    return Response(body, status_code=status_code, media_type=JSON_MEDIA_TYPE)


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
