"""What one execution against a backend produced, before any governance looks at it.

An adapter reports facts (status, body, a taxonomy code); the call pipeline decides what to
do with them (retry, envelope, audit). The codes an adapter emits are listed in
`ADAPTER_ERROR_CODES` and belong to the call taxonomy's registry (`calls/call_errors.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

__all__ = [
    "ADAPTER_ERROR_CODES",
    "AUTH_REFUSED",
    "CHECKSUM",
    "COMMAND_UNADMITTED",
    "CONFLICT",
    "INPUT_REQUIRED",
    "MALFORMED",
    "MISCONFIGURED",
    "NOT_FOUND",
    "RATE_LIMITED",
    "REJECTED",
    "SANDBOX_KILLED",
    "SCHEMA",
    "SERVER_FAULT",
    "TIMEOUT",
    "TOOL_DOWN",
    "TOOL_ERROR",
    "UNAVAILABLE",
    "UNREACHABLE",
    "AdapterOutcome",
    "OutcomeKind",
]


class OutcomeKind(StrEnum):
    SUCCESS = "success"
    RETRYABLE_ERROR = "retryable_error"
    TERMINAL_ERROR = "terminal_error"


REJECTED = "I-REQ-UPSTREAM-REJECTED"
NOT_FOUND = "I-REQ-UPSTREAM-NOT-FOUND"
SCHEMA = "I-REQ-SCHEMA"
AUTH_REFUSED = "A-AUTH-UPSTREAM"
CONFLICT = "P-PRECOND-CONFLICT"
TIMEOUT = "R-TIMEOUT-001"
RATE_LIMITED = "R-UPSTREAM-429"
UNAVAILABLE = "R-UPSTREAM-UNAVAILABLE"
UNREACHABLE = "R-UPSTREAM-CONNECT"
SERVER_FAULT = "S-TOOL-UPSTREAM-FAULT"
MISCONFIGURED = "S-TOOL-CONFIG"
MALFORMED = "D-DATA-MALFORMED"
CHECKSUM = "D-DATA-CHECKSUM"
TOOL_ERROR = "S-TOOL-UPSTREAM-ERROR"
TOOL_DOWN = "S-TOOL-UNAVAILABLE"
SANDBOX_KILLED = "S-TOOL-SANDBOX-KILLED"
COMMAND_UNADMITTED = "S-TOOL-COMMAND-UNADMITTED"
INPUT_REQUIRED = "P-PRECOND-INPUT-REQUIRED"

ADAPTER_ERROR_CODES: dict[str, str] = {
    REJECTED: "backend answered 4xx (400, 405, 422, ... not listed below): the request was wrong",
    NOT_FOUND: "backend answered 404 or 410",
    SCHEMA: "an argument cannot be placed on the request (missing or empty path parameter, "
    "header value that is not printable ASCII, body that is not JSON)",
    AUTH_REFUSED: "backend answered 401 or 403 to the gateway's credentials",
    CONFLICT: "backend answered 409, 412 or 428",
    TIMEOUT: "no complete answer within the call's timeout (connect, pool wait or read)",
    RATE_LIMITED: "backend answered 429; retry_after_ms from Retry-After when given",
    UNAVAILABLE: "backend answered 408, 502, 503 or 504; retry_after_ms from Retry-After when given",
    UNREACHABLE: "connection refused or reset, host name not resolvable, connection closed mid-answer",
    SERVER_FAULT: "backend answered 500 or another 5xx not listed above",
    SANDBOX_KILLED: "a stdio server's sandbox killed it during the call (memory, CPU time or process limit)",
    MISCONFIGURED: "backend secret missing or unusable, invalid base URL, TLS failure, or a redirect; a "
    "stdio server whose command, working directory or sandbox settings cannot work here (misconfigured)",
    COMMAND_UNADMITTED: "a stdio server's pinned command changed on disk and waits for re-admission",
    CHECKSUM: "2xx body does not match the Content-Digest, Repr-Digest or Content-MD5 the backend sent",
    MALFORMED: "2xx body declared JSON but not parseable, undecodable content encoding, "
    "or a body over the adapter's size limit; an MCP server's answer that is not a valid result",
    TOOL_ERROR: "an MCP server's tool answered with isError: its own message is error.message",
    TOOL_DOWN: "an MCP server is down (crashed, restarting after a backoff, or not connected yet)",
    INPUT_REQUIRED: "an MCP server's tool asks the user for input this surface cannot relay",
}


@dataclass(frozen=True, slots=True)
class AdapterOutcome:
    """The result of one execution; `duration_ms` is the time spent talking to the backend.

    `body` is the parsed JSON when the backend declared JSON, else the text (None when empty).
    `message` is the backend's own error message when it gave one, else a description of the
    failure; it is None on success. `details` adds facts for the error's details (built-in tools
    use it), `warnings` notes for the caller.
    """

    kind: OutcomeKind
    status_code: int | None = None
    body: Any = None
    error_code: str | None = None
    message: str | None = None
    retry_after_ms: int | None = None
    duration_ms: float = 0.0
    details: dict[str, Any] | None = None
    warnings: tuple[str, ...] = ()
    cpu_ms: float | None = None
    """CPU the tool spent, when the adapter can measure it (in-process organs); None otherwise."""
    answer: object | None = None
    """The backend's own answer as its protocol carried it (an MCP server's result or error), for a
    surface that passes it on unchanged; opaque to the pipeline."""
    credential: dict[str, Any] | None = None
    """The upstream credential the call was sent with, for the audit record: its mode and the
    upstream subject (never a token); None when the adapter sent none of its own."""

    @property
    def ok(self) -> bool:
        return self.kind is OutcomeKind.SUCCESS
