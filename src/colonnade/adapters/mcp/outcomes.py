"""What a downstream MCP server's answer means for the call: the adapter outcome of a tools/call.

A result becomes the call's output: its structured content when it has one, else its content
blocks (`{"content": [...]}`), so REST callers get data and MCP surfaces can pass the blocks on. A
result marked `isError` keeps the tool's own message under `S-TOOL-UPSTREAM-ERROR`. JSON-RPC errors,
timeouts, lost connections and answers that are not valid results (or not JSON: the transport's
parse error) map onto the taxonomy's codes.

Every path to a server validates its answer as the SDK's session does for the negotiated version
(pydantic, in lax mode; at 2026-07-28 the SDK does not look inside content blocks). What that lets
through and the gateway would misread or pass on is checked here, on every path alike: a
`resultType` the gateway never claimed, content blocks that are none of the spec's (about 8 us for
a small result), an `isError` that is not a boolean (`"yes"` passes as true), and a success
without structured content from a tool that lists an output schema (the spec's MUST; a client
would refuse it). Structured content that is present and
breaks the schema is the output validation stage's (`D-DATA-OUTPUT-SCHEMA`), as for every tool.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types.methods import is_input_required
from pydantic import TypeAdapter, ValidationError

from colonnade.adapters.outcome import (
    INPUT_REQUIRED,
    MALFORMED,
    NOT_FOUND,
    REJECTED,
    SANDBOX_KILLED,
    SERVER_FAULT,
    TIMEOUT,
    TOOL_DOWN,
    TOOL_ERROR,
    UNREACHABLE,
    AdapterOutcome,
    OutcomeKind,
)

__all__ = ["down", "error_outcome", "held", "malformed", "result_outcome", "sandbox_killed", "timed_out"]

_REJECTED_CODES = frozenset(
    {
        types.INVALID_PARAMS,
        types.INVALID_REQUEST,
        types.HEADER_MISMATCH,
        types.MISSING_REQUIRED_CLIENT_CAPABILITY,
    }
)
_MAX_DATA_CHARS = 2_000
_BLOCKS: TypeAdapter[list[types.ContentBlock]] = TypeAdapter(list[types.ContentBlock])


def result_outcome(
    raw: dict[str, Any], duration_ms: float, *, server: str = "", output_schema: bool = False
) -> AdapterOutcome:
    """`output_schema`: whether the tool lists one (then a success must carry structured content)."""
    if is_input_required(raw):
        asked = sorted((raw.get("inputRequests") or {}).keys())
        return AdapterOutcome(
            OutcomeKind.TERMINAL_ERROR,
            error_code=INPUT_REQUIRED,
            message="the tool asks the user for input" + (f" ({', '.join(asked)})" if asked else ""),
            duration_ms=duration_ms,
            details={"input_requests": asked},
        )
    fault = _misread(raw, output_schema)
    if fault is not None:
        return malformed(f"server {server!r} answered with an invalid result: {fault}", duration_ms)
    content = raw["content"]
    if raw.get("isError") is True:
        return AdapterOutcome(
            OutcomeKind.TERMINAL_ERROR,
            error_code=TOOL_ERROR,
            message=_text_of(content) or "the tool reported an error without a message",
            duration_ms=duration_ms,
        )
    structured = raw.get("structuredContent")
    body = structured if structured is not None else {"content": content}
    return AdapterOutcome(OutcomeKind.SUCCESS, body=body, duration_ms=duration_ms)


def error_outcome(exc: MCPError, duration_ms: float) -> AdapterOutcome:
    code = exc.error.code
    details: dict[str, Any] = {"upstream_code": code}
    data = _small(exc.error.data)
    if data is not None:
        details["upstream_data"] = data
    if code == types.REQUEST_TIMEOUT:
        kind, mapped = OutcomeKind.RETRYABLE_ERROR, TIMEOUT
    elif code == types.CONNECTION_CLOSED:
        kind, mapped = OutcomeKind.RETRYABLE_ERROR, UNREACHABLE
    elif code == types.PARSE_ERROR:
        kind, mapped = OutcomeKind.TERMINAL_ERROR, MALFORMED
    elif code == types.METHOD_NOT_FOUND:
        kind, mapped = OutcomeKind.TERMINAL_ERROR, NOT_FOUND
    elif code in _REJECTED_CODES:
        kind, mapped = OutcomeKind.TERMINAL_ERROR, REJECTED
    else:
        kind, mapped = OutcomeKind.TERMINAL_ERROR, SERVER_FAULT
    return AdapterOutcome(
        kind, error_code=mapped, message=exc.error.message, duration_ms=duration_ms, details=details
    )


def down(message: str) -> AdapterOutcome:
    return AdapterOutcome(OutcomeKind.TERMINAL_ERROR, error_code=TOOL_DOWN, message=message)


def held(code: str, message: str) -> AdapterOutcome:
    """The server is held down until someone acts (misconfigured, or its command not admitted)."""
    return AdapterOutcome(OutcomeKind.TERMINAL_ERROR, error_code=code, message=message)


def sandbox_killed(message: str, duration_ms: float) -> AdapterOutcome:
    """The server's sandbox killed its process during the call (a limit it ran into)."""
    return AdapterOutcome(
        OutcomeKind.TERMINAL_ERROR, error_code=SANDBOX_KILLED, message=message, duration_ms=duration_ms
    )


def timed_out(message: str, duration_ms: float) -> AdapterOutcome:
    return AdapterOutcome(
        OutcomeKind.RETRYABLE_ERROR, error_code=TIMEOUT, message=message, duration_ms=duration_ms
    )


def malformed(message: str, duration_ms: float) -> AdapterOutcome:
    return AdapterOutcome(
        OutcomeKind.TERMINAL_ERROR, error_code=MALFORMED, message=message, duration_ms=duration_ms
    )


def _misread(raw: dict[str, Any], output_schema: bool) -> str | None:
    """Why the gateway cannot take a validated `tools/call` result at its word, or None."""
    kind = raw.get("resultType", "complete")
    if kind != "complete":
        return f"resultType {kind!r} is none this gateway asked for"
    content = raw.get("content")
    if not isinstance(content, list):
        return "content is not a list"
    try:
        _BLOCKS.validate_python(content, by_name=False)
    except ValidationError as exc:
        return f"content is not a list of content blocks ({_first(exc)})"
    is_error = raw.get("isError")
    if is_error is not None and not isinstance(is_error, bool):
        return "isError is not a boolean"
    structured = raw.get("structuredContent")
    if structured is not None and not isinstance(structured, dict):
        return "structuredContent is not an object"
    if output_schema and structured is None and is_error is not True:
        return "the tool lists an output schema and the result has no structuredContent"
    return None


def _first(exc: ValidationError) -> str:
    errors = exc.errors()
    if not errors:
        return str(exc)
    where = ".".join(str(part) for part in errors[0]["loc"])
    return f"{where}: {errors[0]['msg']}" if where else errors[0]["msg"]


def _text_of(content: list[Any]) -> str:
    texts = [
        block.get("text", "") for block in content if isinstance(block, dict) and block.get("type") == "text"
    ]
    return "\n".join(text for text in texts if isinstance(text, str)).strip()


def _small(data: Any) -> Any:
    """Error data the server attached, when it is JSON and small enough to show."""
    if data is None:
        return None
    try:
        text = json.dumps(data)
    except (TypeError, ValueError):
        return None
    return data if len(text) <= _MAX_DATA_CHARS else None
