"""MCP's envelope version choice: version 2 by default, version 1 in `_meta` when the client asks."""

from __future__ import annotations

from typing import Any

import mcp_types as types
import pytest
from jsonschema import Draft202012Validator
from mcp import Client

from colonnade.calls.envelope_schemas import CALL_RESULT, CALL_RESULT_V1
from colonnade.surfaces.mcp.render import RESULT_META_KEY
from tests.surfaces.conftest import Gateway

V1 = Draft202012Validator(CALL_RESULT_V1.schema())
V2 = Draft202012Validator(CALL_RESULT.schema())
CUSTOMER = {"customer_id": "C-1001"}


def envelope(result: types.CallToolResult) -> dict[str, Any]:
    return dict((result.meta or {})[RESULT_META_KEY])


async def call(gateway: Gateway, arguments: dict[str, Any], meta: dict[str, Any] | None = None) -> Any:
    async with Client(gateway.surface.server) as client:  # type: ignore[arg-type]
        return await client.call_tool("acme__crm__get_customer", arguments, meta=meta)


async def test_version_2_is_the_default_without_its_output(gateway: Gateway) -> None:
    result = await call(gateway, CUSTOMER)
    shown = envelope(result)
    assert shown["envelope_version"] == 2 and "output" not in shown
    assert V2.is_valid({**shown, "output": result.structured_content})


@pytest.mark.parametrize(
    "meta", [{"colonnade/envelope_version": 1}, {"colonnade/request": {"envelope_version": 1}}]
)
async def test_version_1_is_the_whole_strict_envelope(gateway: Gateway, meta: dict[str, Any]) -> None:
    result = await call(gateway, CUSTOMER, meta)
    shown = envelope(result)
    assert [e.message for e in V1.iter_errors(shown)] == []
    assert (shown["envelope_version"], shown["status"]) == (1, "success")
    assert shown["output"] == result.structured_content and isinstance(shown["metrics"]["duration_ms"], int)
    assert result.is_error is False


async def test_a_failure_in_version_1_is_valid_too(gateway: Gateway) -> None:
    result = await call(gateway, {"customer_id": 7}, {"colonnade/envelope_version": 1})
    shown = envelope(result)
    assert [e.message for e in V1.iter_errors(shown)] == []
    assert (shown["status"], shown["error"]["code"], result.is_error) == (
        "invalid_request",
        "I-REQ-SCHEMA",
        True,
    )


@pytest.mark.parametrize("version", [3, 0, "1", "two", [1]])
async def test_another_version_is_a_typed_refusal(gateway: Gateway, version: Any) -> None:
    result = await call(gateway, CUSTOMER, {"colonnade/request": {"envelope_version": version}})
    shown = envelope(result)
    assert result.is_error is True and shown["error"]["code"] == "I-REQ-ENVELOPE"
    pointers = [v["pointer"] for v in shown["error"]["details"]["violations"]]
    assert pointers and all(p.endswith("/envelope_version") for p in pointers), pointers
