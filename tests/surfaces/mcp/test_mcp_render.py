"""Results as MCP renders them: structured content is an object in both eras, whatever the output."""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
import pytest

from colonnade.calls.envelope import CallResult, CallStatus
from colonnade.surfaces.mcp.render import proxied_replay, render_result


@pytest.mark.parametrize("legacy", [True, False], ids=["2025-11-25", "2026-07-28"])
@pytest.mark.parametrize(
    ("output", "structured"),
    [
        ([{"id": 1, "status": "available"}], {"result": [{"id": 1, "status": "available"}]}),
        ("logged in user session:42", {"result": "logged in user session:42"}),
        ([True, False], {"result": [True, False]}),
        ({"id": "C-1001"}, {"id": "C-1001"}),
    ],
)
def test_structured_content_is_always_an_object(
    legacy: bool, output: Any, structured: dict[str, Any]
) -> None:
    rendered = render_result(
        CallResult(call_id="c-1", status=CallStatus.SUCCESS, output=output), legacy=legacy
    )
    assert rendered.is_error is False
    assert rendered.structured_content == structured
    text = rendered.content[0]
    assert isinstance(text, types.TextContent) and json.loads(text.text) == output  # the text keeps it bare


def test_a_proxied_replay_keeps_the_servers_content_blocks_and_only_them() -> None:
    blocks = [
        {"type": "text", "text": "Favourite colour: blue"},
        {"type": "image", "data": "AA==", "mimeType": "image/png"},
    ]
    replayed = proxied_replay(CallResult(call_id="c", status=CallStatus.SUCCESS, output={"content": blocks}))
    assert replayed is not None and replayed["content"] == blocks and replayed["isError"] is False
    assert replayed["_meta"]["colonnade/result"]["status"] == "success"
    types.CallToolResult.model_validate(replayed, by_name=False)
    # structured content that only looks like blocks, structured content, and failures: not a replay of blocks
    lookalike = CallResult(call_id="c", status=CallStatus.SUCCESS, output={"content": [{"kind": "row"}]})
    structured = CallResult(call_id="c", status=CallStatus.SUCCESS, output={"content": blocks, "total": 2})
    assert proxied_replay(lookalike) is None and proxied_replay(structured) is None
