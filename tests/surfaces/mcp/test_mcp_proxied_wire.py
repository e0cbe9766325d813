"""`/mcp` hands a proxied answer to the SDK as a dict: the bytes are those of the model it once built.

The MCP surface used to build `CallToolResult` from a downstream server's rendered answer, which
the SDK's runner dumped (`exclude_none`) and then passed through its per-version sieve; it now
passes the dict, with the model's one default (`model_defaults`), to the sieve. Differential: for
answers with every content block type, nulls, fields the model does not know, cache hints and
structured content, both give the same wire form in both protocol eras.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
import pytest
from mcp_types import methods

from colonnade.calls.envelope import CallResult, CallStatus
from colonnade.surfaces.mcp.render import model_defaults, render_answer

BLOCKS: list[dict[str, Any]] = [
    {"type": "text", "text": "x", "annotations": None},
    {"type": "text", "text": "y", "annotations": {"audience": ["user"], "priority": 0.5}, "_meta": {"k": 1}},
    {"type": "image", "data": "AA==", "mimeType": "image/png"},
    {"type": "audio", "data": "AA==", "mimeType": "audio/wav"},
    {"type": "resource_link", "uri": "file:///a", "name": "a", "description": None},
    {"type": "resource", "resource": {"uri": "file:///b", "text": "t", "mimeType": "text/plain"}},
    {"type": "resource", "resource": {"uri": "file:///c", "blob": "AA=="}},
]
ANSWERS: list[dict[str, Any]] = [
    {"content": BLOCKS, "isError": False},
    {"content": [BLOCKS[0]], "structuredContent": {"n": None, "list": [1, None]}},
    {"resultType": "complete", "content": [], "ttlMs": 5, "cacheScope": "private", "_meta": {"theirs": None}},
    {"content": [{"type": "text", "text": "z", "unknownField": {"x": None}}], "unknown": 1},
    {"content": [], "_meta": {types.SERVER_INFO_META_KEY: {"name": "upstream", "version": "1"}}},
]


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
@pytest.mark.parametrize("answer", ANSWERS)
def test_the_dict_serialises_as_the_model_did(answer: dict[str, Any], version: str) -> None:
    result = CallResult(call_id="c-1", status=CallStatus.SUCCESS, output={"content": answer["content"]})
    rendered = render_answer(result, answer, legacy=version != "2026-07-28")
    assert isinstance(rendered, dict)
    model = types.CallToolResult.model_validate(rendered, by_name=False)
    before = methods.serialize_server_result(
        "tools/call", version, model.model_dump(by_alias=True, mode="json", exclude_none=True)
    )
    assert methods.serialize_server_result("tools/call", version, model_defaults(dict(rendered))) == before
