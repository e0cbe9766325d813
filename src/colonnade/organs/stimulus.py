"""The organ's call contract: a `Stimulus` in, a `Response` out, and failures as data, never raised.

An organ answers every stimulus with a response: `ok=false` carries an `OrganFailure` whose code
comes from the small vocabulary below, so a caller (the gateway's adapter, the executive, a
sidecar) can map it without knowing the organ. A function signals an expected failure (no such
key, a conflict) by raising `OrganError`; anything else it raises becomes an `Internal` failure.
"""

from __future__ import annotations

from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "CONFLICT",
    "FAILURE_CODES",
    "INTERNAL",
    "INVALID_INPUT",
    "NOT_FOUND",
    "REJECTED",
    "TIMEOUT",
    "UNAVAILABLE",
    "UNLOADABLE",
    "UNSUPPORTED_OPERATION",
    "OrganError",
    "OrganFailure",
    "Response",
    "Stimulus",
    "StimulusContext",
]

UNSUPPORTED_OPERATION: Final = "UnsupportedOperation"
INVALID_INPUT: Final = "InvalidInput"
NOT_FOUND: Final = "NotFound"
CONFLICT: Final = "Conflict"
REJECTED: Final = "Rejected"
UNAVAILABLE: Final = "Unavailable"
TIMEOUT: Final = "Timeout"
INTERNAL: Final = "Internal"
UNLOADABLE: Final = "Unloadable"

FAILURE_CODES: dict[str, str] = {
    UNSUPPORTED_OPERATION: "the organ does not answer this operation",
    INVALID_INPUT: "the input does not match the function's input schema",
    NOT_FOUND: "the input names something the organ does not have",
    CONFLICT: "the organ's state does not allow this now",
    REJECTED: "the organ refused the input for a reason of its own",
    UNAVAILABLE: "the organ cannot serve now; a later call may succeed",
    TIMEOUT: "the organ did not answer within the time given",
    INTERNAL: "the organ failed (a bug); the message names the exception's type only",
    UNLOADABLE: "the organ's module cannot be imported, or no longer fits its card",
}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class StimulusContext(_Model):
    """Who asks and within what: ids for logs, the caller, the time left and the organ's own folder."""

    call_id: str | None = None
    trace_id: str | None = None
    principal_id: str | None = None
    tenant: str | None = None
    timeout_s: float | None = Field(default=None, ge=0, description="Time left for the answer.")
    data_dir: str | None = Field(default=None, description="A folder the organ may keep its state in.")
    idempotency_key: str | None = Field(
        default=None, description="The caller's key, scoped to it: the same key means the same call."
    )


class Stimulus(_Model):
    op: str = Field(min_length=1, description="Operation: a function, or `sub_organ.function`.")
    input: dict[str, Any] = Field(default_factory=dict)
    context: StimulusContext = Field(default_factory=StimulusContext)


class OrganFailure(_Model):
    code: str = Field(description="One of FAILURE_CODES.")
    message: str
    details: dict[str, Any] = Field(default_factory=dict)


class Response(_Model):
    """What one stimulus produced; `cpu_ms` is the CPU the organ spent on it, when it measured it."""

    ok: bool
    output: Any = None
    latency_ms: float = Field(default=0.0, ge=0)
    cost: float = Field(default=0.0, ge=0, description="In the organ's own unit (e.g. credits).")
    cpu_ms: float | None = Field(default=None, ge=0)
    error: OrganFailure | None = None

    @classmethod
    def failure(cls, code: str, message: str, *, latency_ms: float = 0.0, **details: Any) -> Response:
        return cls(
            ok=False, latency_ms=latency_ms, error=OrganFailure(code=code, message=message, details=details)
        )


class OrganError(Exception):
    """Raised by an organ function for an expected failure; it becomes `ok=false` with this code."""

    def __init__(self, code: str, message: str, **details: Any) -> None:
        if code not in FAILURE_CODES:
            raise ValueError(f"unknown organ failure code {code!r}; use one of {', '.join(FAILURE_CODES)}")
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details
