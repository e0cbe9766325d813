"""What a downstream MCP server answered, as the call's outcome."""

from __future__ import annotations

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from colonnade.adapters.mcp.outcomes import error_outcome, result_outcome
from colonnade.adapters.outcome import OutcomeKind
from colonnade.calls.call_errors import REGISTRY


def test_structured_content_is_the_output() -> None:
    outcome = result_outcome(
        {"content": [{"type": "text", "text": "{}"}], "structuredContent": {"a": 1}}, 1.0
    )
    assert (outcome.kind, outcome.body) == (OutcomeKind.SUCCESS, {"a": 1})


def test_without_structured_content_the_blocks_are_the_output() -> None:
    blocks = [{"type": "image", "data": "AA==", "mimeType": "image/png"}]
    outcome = result_outcome({"content": blocks}, 1.0)
    assert outcome.body == {"content": blocks}


def test_a_tool_error_keeps_the_tools_own_message() -> None:
    raw = {
        "content": [{"type": "text", "text": "no such file"}, {"type": "text", "text": "really"}],
        "isError": True,
    }
    outcome = result_outcome(raw, 1.0)
    assert (outcome.kind, outcome.error_code) == (OutcomeKind.TERMINAL_ERROR, "S-TOOL-UPSTREAM-ERROR")
    assert outcome.message == "no such file\nreally"


def test_an_input_round_the_caller_cannot_answer_says_what_was_asked() -> None:
    raw = {"resultType": "input_required", "inputRequests": {"name": {}, "age": {}}}
    outcome = result_outcome(raw, 1.0)
    assert outcome.error_code == "P-PRECOND-INPUT-REQUIRED" and "age, name" in (outcome.message or "")


_TEXT = [{"type": "text", "text": "hi"}]


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ({"resultType": "bogus", "content": _TEXT}, "resultType 'bogus'"),
        ({"content": "hi"}, "content is not a list"),
        ({}, "content is not a list"),
        ({"content": [{"type": "text"}]}, "content blocks (0.TextContent.text: Field required)"),
        ({"content": [{"type": "video", "url": "x"}]}, "content is not a list of content blocks"),
        ({"content": _TEXT, "isError": "yes"}, "isError is not a boolean"),
        ({"content": _TEXT, "isError": 1}, "isError is not a boolean"),
        ({"content": _TEXT, "structuredContent": [1]}, "structuredContent is not an object"),
    ],
)
def test_what_lax_validation_lets_through_is_malformed(raw: dict[str, object], why: str) -> None:
    outcome = result_outcome(raw, 1.0, server="s")
    assert (outcome.kind, outcome.error_code) == (OutcomeKind.TERMINAL_ERROR, "D-DATA-MALFORMED")
    assert outcome.message is not None and outcome.message.startswith("server 's' answered with an invalid")
    assert why in outcome.message


def test_a_tool_with_an_output_schema_must_answer_structured_content() -> None:
    missing = result_outcome({"content": _TEXT}, 1.0, output_schema=True)
    assert missing.error_code == "D-DATA-MALFORMED" and "no structuredContent" in (missing.message or "")
    assert result_outcome({"content": _TEXT, "isError": True}, 1.0, output_schema=True).error_code == (
        "S-TOOL-UPSTREAM-ERROR"  # a tool error needs none
    )
    assert result_outcome({"content": [], "structuredContent": {}}, 1.0, output_schema=True).ok


@pytest.mark.parametrize(
    ("code", "kind", "mapped"),
    [
        (types.REQUEST_TIMEOUT, OutcomeKind.RETRYABLE_ERROR, "R-TIMEOUT-001"),
        (types.CONNECTION_CLOSED, OutcomeKind.RETRYABLE_ERROR, "R-UPSTREAM-CONNECT"),
        (types.METHOD_NOT_FOUND, OutcomeKind.TERMINAL_ERROR, "I-REQ-UPSTREAM-NOT-FOUND"),
        (types.INVALID_PARAMS, OutcomeKind.TERMINAL_ERROR, "I-REQ-UPSTREAM-REJECTED"),
        (types.MISSING_REQUIRED_CLIENT_CAPABILITY, OutcomeKind.TERMINAL_ERROR, "I-REQ-UPSTREAM-REJECTED"),
        (types.PARSE_ERROR, OutcomeKind.TERMINAL_ERROR, "D-DATA-MALFORMED"),
        (types.INTERNAL_ERROR, OutcomeKind.TERMINAL_ERROR, "S-TOOL-UPSTREAM-FAULT"),
        (-1, OutcomeKind.TERMINAL_ERROR, "S-TOOL-UPSTREAM-FAULT"),
    ],
)
def test_json_rpc_errors_map_onto_the_taxonomy(code: int, kind: OutcomeKind, mapped: str) -> None:
    outcome = error_outcome(MCPError(code, "said the server", data={"uri": "x"}), 2.0)
    assert (outcome.kind, outcome.error_code, outcome.message) == (kind, mapped, "said the server")
    assert outcome.details == {"upstream_code": code, "upstream_data": {"uri": "x"}}
    assert REGISTRY[mapped].status.value == kind.value


def test_large_error_data_is_left_out() -> None:
    outcome = error_outcome(MCPError(types.INTERNAL_ERROR, "boom", data="x" * 5000), 0.0)
    assert outcome.details == {"upstream_code": types.INTERNAL_ERROR}
