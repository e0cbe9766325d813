"""The plain-call path's shortcuts, each against what the SDK would do without it (no server needed)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp.shared.inbound import validate_mcp_param_headers
from mcp_types import JSONRPCResponse

from colonnade.surfaces.mcp.plain_call import _MirroredArguments, _plain_json

MIRRORED = {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}
PLAIN = {"type": "object", "properties": {"region": {"type": "string"}}}
INVALID = {"type": "object", "properties": {"n": {"type": "object", "x-mcp-header": "N"}}}


def _as_the_sdk_writes(reply: JSONRPCResponse) -> bytes:
    return json.dumps(
        reply.model_dump(mode="json", by_alias=True, exclude_none=True), separators=(",", ":")
    ).encode()


@pytest.mark.parametrize(
    "result",
    [
        {"resultType": "complete", "content": [{"type": "text", "text": "é \u2028"}], "isError": False},
        {"resultType": "input_required", "inputRequests": {}, "requestState": "s", "n": [1, 2.5, None, True]},
    ],
)
def test_a_core_result_is_written_as_the_sdk_writes_it(result: dict[str, Any]) -> None:
    reply = JSONRPCResponse(jsonrpc="2.0", id="r-1", result=result)
    assert _plain_json(reply) == _as_the_sdk_writes(reply)


@pytest.mark.parametrize(
    "result",
    [
        {"resultType": "x-extension/thing", "content": []},
        {"resultType": "complete", "odd": {1, 2}},
        {"resultType": "complete", "value": float("nan")},
    ],
)
def test_anything_else_goes_through_the_model(result: dict[str, Any]) -> None:
    assert _plain_json(JSONRPCResponse(jsonrpc="2.0", id=1, result=result)) is None


def test_a_schema_that_mirrors_nothing_passes_any_headers_as_the_sdk_would() -> None:
    mirrored = _MirroredArguments()
    headers = {"mcp-param-region": "elsewhere"}
    assert mirrored.mirrors(MIRRORED)
    assert (
        not mirrored.mirrors(PLAIN) and validate_mcp_param_headers(PLAIN, {"region": "eu"}, headers) is None
    )
    assert not mirrored.mirrors(INVALID) and validate_mcp_param_headers(INVALID, {"n": {}}, headers) is None
    assert validate_mcp_param_headers(MIRRORED, {"region": "eu"}, headers) is not None


def test_answers_are_kept_per_schema_object_within_a_bound() -> None:
    mirrored = _MirroredArguments(limit=2)
    twin = json.loads(json.dumps(MIRRORED))
    assert mirrored.mirrors(MIRRORED) and mirrored.mirrors(twin)
    assert not mirrored.mirrors(PLAIN)  # the table started afresh at its bound
    assert mirrored.mirrors(MIRRORED) and not mirrored.mirrors(PLAIN)
