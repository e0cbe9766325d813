"""What a downstream MCP server's answer means for the call: the adapter outcome of a tools/call.

A result becomes the call's output: its structured content when it has one, else its content
blocks (`{"content": [...]}`), so REST callers get data and MCP surfaces can pass the blocks on. A
result marked `isError` keeps the tool's own message under `S-TOOL-UPSTREAM-ERROR`. JSON-RPC errors,
timeouts, lost connections and answers that are not valid results (or not JSON: the transport's
parse error) map onto the taxonomy's codes.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types.methods import is_input_required

from colonnade.adapters.outcome import (
    INPUT_REQUIRED,
    MALFORMED,
    NOT_FOUND,
    REJECTED,
    SERVER_FAULT,
    TIMEOUT,
    TOOL_DOWN,
    TOOL_ERROR,
    UNREACHABLE,
    AdapterOutcome,
    OutcomeKind,
)

__all__ = ["down", "error_outcome", "malformed", "result_outcome", "timed_out"]

_REJECTED_CODES = frozenset(
    {
        types.INVALID_PARAMS,
        types.INVALID_REQUEST,
        types.HEADER_MISMATCH,
        types.MISSING_REQUIRED_CLIENT_CAPABILITY,
    }
)
_MAX_DATA_CHARS = 2_000


def result_outcome(raw: dict[str, Any], duration_ms: float) -> AdapterOutcome:
    if is_input_required(raw):
        asked = sorted((raw.get("inputRequests") or {}).keys())
        return AdapterOutcome(
            OutcomeKind.TERMINAL_ERROR,
            error_code=INPUT_REQUIRED,
            message="the tool asks the user for input" + (f" ({', '.join(asked)})" if asked else ""),
            duration_ms=duration_ms,
            details={"input_requests": asked},
        )
    content = raw.get("content") or []
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


def timed_out(message: str, duration_ms: float) -> AdapterOutcome:
    return AdapterOutcome(
        OutcomeKind.RETRYABLE_ERROR, error_code=TIMEOUT, message=message, duration_ms=duration_ms
    )


def malformed(message: str, duration_ms: float) -> AdapterOutcome:
    return AdapterOutcome(
        OutcomeKind.TERMINAL_ERROR, error_code=MALFORMED, message=message, duration_ms=duration_ms
    )


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
