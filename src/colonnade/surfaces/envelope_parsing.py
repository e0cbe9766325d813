"""Reading a call envelope (REST bodies, MCP `_meta`): every problem reported at once, never a crash.

A body that is too large, not JSON, not an object, or breaks the envelope model becomes an
`EnvelopeRejection`, which renders as a typed CallResult listing each violation with its JSON
pointer. Parsing is strict (no type coercion, no NaN/Infinity, no lone surrogates, nesting
bounded by the JSON parser) so that what is accepted is exactly what the published
`call-request.schema.json` allows.
"""

from __future__ import annotations

import inspect
import types
import uuid
from dataclasses import dataclass, field
from typing import Any, TypeVar, Union, get_args, get_origin

import pydantic_core
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import ErrorDetails
from starlette.requests import Request

from colonnade.calls.call_errors import error
from colonnade.calls.envelope import CallMetrics, CallResult, EnvelopeVersion
from colonnade.calls.schema_validation import Violation

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "MAX_VIOLATIONS",
    "CommitRequest",
    "EnvelopeRejection",
    "parse_envelope",
    "read_body",
    "validate_envelope",
]

DEFAULT_MAX_BODY_BYTES = 1024 * 1024
MAX_VIOLATIONS = 100

M = TypeVar("M", bound=BaseModel)


class CommitRequest(BaseModel):
    """The body of `POST /v1/calls/commit` and `/v1/calls/discard`: the token a `success_prep` result
    handed out."""

    model_config = ConfigDict(extra="forbid")

    commit_token: str = Field(min_length=1, max_length=4096)
    call_id: str | None = None
    envelope_version: EnvelopeVersion | None = None


@dataclass(frozen=True, slots=True)
class EnvelopeRejection:
    """Why a request never reached the pipeline, with the HTTP status that says so to generic clients."""

    code: str
    message: str
    http_status: int
    violations: tuple[Violation, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)
    call_id: str | None = None

    def result(self, duration_ms: float = 0.0) -> CallResult:
        """The typed CallResult: the request's call_id when it named one, else a fresh one."""
        details = dict(self.details)
        if self.violations:
            details["violations"] = [v.to_dict() for v in self.violations[:MAX_VIOLATIONS]]
            details["violation_count"] = len(self.violations)
        status, err = error(self.code, self.message, **details)
        return CallResult(
            call_id=self.call_id if self.call_id is not None else str(uuid.uuid4()),
            status=status,
            error=err,
            metrics=CallMetrics(duration_ms=duration_ms),
        )


async def read_body(request: Request, limit: int) -> bytes | EnvelopeRejection:
    """The whole body, or a rejection as soon as it is known to exceed `limit` bytes."""
    declared = request.headers.get("content-length", "")
    if declared.isascii() and declared.isdigit() and int(declared) > limit:
        return _too_large(limit, int(declared))
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            return _too_large(limit, None)
    return bytes(body)


def parse_envelope(body: bytes, model: type[M]) -> M | EnvelopeRejection:
    """The validated envelope, or a rejection listing every violation (JSON pointer + message)."""
    if not body.strip():
        return _malformed(f"the body is empty; send a {model.__name__} JSON object")
    try:
        data = pydantic_core.from_json(body, allow_inf_nan=False)
    except ValueError as exc:
        return _malformed(f"the body is not valid JSON: {exc}")
    if not isinstance(data, dict):
        return _malformed(f"the body must be a JSON object (a {model.__name__}), not {_json_type(data)}")
    return validate_envelope(data, model)


def validate_envelope(data: dict[str, Any], model: type[M], *, prefix: str = "") -> M | EnvelopeRejection:
    """Strict validation of parsed JSON; every violation listed, pointers under `prefix`."""
    try:
        return model.model_validate(data, strict=True)
    except ValidationError as exc:
        found = tuple(_violation(model, detail, prefix) for detail in exc.errors(include_url=False))
    call_id = data.get("call_id")
    summary = "; ".join(f"{v.pointer}: {v.message}" for v in found[:3])
    more = f" (and {len(found) - 3} more)" if len(found) > 3 else ""
    return EnvelopeRejection(
        code="I-REQ-ENVELOPE",
        message=f"{len(found)} problem(s) in the {model.__name__}: {summary}{more}",
        http_status=400,
        violations=found,
        call_id=call_id if isinstance(call_id, str) else None,
    )


def _malformed(message: str, *, http_status: int = 400) -> EnvelopeRejection:
    return EnvelopeRejection(
        code="I-REQ-ENVELOPE", message=message, http_status=http_status, violations=(Violation("", message),)
    )


def _too_large(limit: int, declared: int | None) -> EnvelopeRejection:
    size = f"{declared} bytes" if declared is not None else "more than that"
    return EnvelopeRejection(
        code="I-REQ-TOO-LARGE",
        message=f"the request body is larger than the limit of {limit} bytes (got {size})",
        http_status=413,
        details={"limit_bytes": limit},
    )


def _violation(model: type[BaseModel], detail: ErrorDetails, prefix: str = "") -> Violation:
    location = tuple(detail["loc"])
    pointer = prefix + "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in location)
    kind = detail["type"]
    if kind == "missing":
        message = f"required field '{location[-1]}' is missing"
    elif kind == "extra_forbidden":
        allowed = ", ".join(_fields_at(model, location[:-1])) or "none"
        message = f"unknown field '{location[-1]}' (allowed here: {allowed})"
    else:
        message = f"{detail['msg']} (got {_json_type(detail.get('input'))})"
    return Violation(pointer, message)


def _fields_at(model: type[BaseModel], path: tuple[int | str, ...]) -> list[str]:
    """The field names of the nested model at `path` (e.g. ('constraints',) -> CallConstraints)."""
    current: type[BaseModel] | None = model
    for part in path:
        info = current.model_fields.get(part) if current is not None and isinstance(part, str) else None
        current = _model_in(info.annotation) if info is not None else None
    return list(current.model_fields) if current is not None else []


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model inside an annotation such as `RetryPolicy | None`."""
    if inspect.isclass(annotation) and issubclass(annotation, BaseModel):
        return annotation
    if get_origin(annotation) in (Union, types.UnionType):
        for member in get_args(annotation):
            found = _model_in(member)
            if found is not None:
                return found
    return None


def _json_type(value: Any) -> str:
    """The JSON name of a parsed value's type; the value itself is never echoed."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"
