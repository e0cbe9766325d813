"""Two-phase commit: prepare -> success_prep + token; commit once; roll back after the deadline."""

from __future__ import annotations

import asyncio

from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.calls.envelope import CallStatus
from tests.calls.conftest import Harness, build_harness


async def test_prepare_then_commit_once(harness: Harness) -> None:
    prepared = await harness.call("reserve", input={"item_id": "I-1"})
    assert prepared.status is CallStatus.SUCCESS_PREP
    assert prepared.commit_token is not None and prepared.commit_token.startswith("ct_")
    reservation = prepared.output["reservation_id"]  # type: ignore[index]
    assert [e["kind"] for e in harness.ledger()] == ["reserve"]

    committed = await harness.service.commit(prepared.commit_token)
    assert committed.status is CallStatus.SUCCESS, committed.error
    assert committed.output == {"reservation_id": reservation, "state": "confirmed"}
    again = await harness.service.commit(prepared.commit_token)
    assert again.status is CallStatus.TERMINAL_ERROR
    assert again.error is not None and again.error.code == "P-PRECOND-COMMIT-TOKEN"
    assert [e["kind"] for e in harness.ledger()] == ["reserve", "confirm"]


async def test_concurrent_commits_consume_the_token_once(harness: Harness) -> None:
    prepared = await harness.call("reserve", input={"item_id": "I-2"})
    assert prepared.commit_token is not None
    results = await asyncio.gather(*(harness.service.commit(prepared.commit_token) for _ in range(10)))
    assert sum(r.status is CallStatus.SUCCESS for r in results) == 1
    assert [e["kind"] for e in harness.ledger()].count("confirm") == 1


async def test_uncommitted_token_is_rolled_back_after_its_window(
    empty_engine: AsyncEngine, harness: Harness
) -> None:
    # The window outlasts a first prepare on a busy machine (seen taking 484 ms inside the full suite).
    short, built = await build_harness(empty_engine, harness.fault_url, window_ms=1_500)
    try:
        prepared = await short.call("reserve", input={"item_id": "I-1"})
        assert prepared.commit_token is not None
        assert await short.coordinator.sweep() == 0  # not due yet
        await asyncio.sleep(1.6)
        assert await short.coordinator.sweep() == 1
        late = await short.service.commit(prepared.commit_token)
    finally:
        await built.aclose()
    assert late.error is not None and late.error.code == "P-PRECOND-COMMIT-TOKEN"
    assert "rolled_back" in late.error.message
    assert [e["kind"] for e in harness.ledger()] == ["reserve", "cancel"]


async def test_unknown_token_is_refused(harness: Harness) -> None:
    result = await harness.service.commit("ct_nope")
    assert result.status is CallStatus.TERMINAL_ERROR
    assert result.error is not None and result.error.code == "P-PRECOND-COMMIT-TOKEN"


async def test_failed_prepare_issues_no_token(harness: Harness) -> None:
    result = await harness.call("reserve", "500", input={"item_id": "I-1"})
    assert result.status is CallStatus.TERMINAL_ERROR
    assert result.commit_token is None


async def test_mcp_clients_commit_with_the_commit_tool(harness: Harness) -> None:
    from mcp import Client

    from colonnade.calls.commit_tool import COMMIT_TOOL_NAME as COMMIT_TOOL

    async with Client(harness.gateway.mcp.server) as client:
        names = {tool.name for tool in (await client.list_tools(cache_mode="bypass")).tools}
        assert COMMIT_TOOL in names
        prepared = await client.call_tool("chaos__faults__reserve", {"item_id": "I-1"})
        envelope = dict((prepared.meta or {})["colonnade/result"])
        assert envelope["status"] == "success_prep"
        committed = await client.call_tool(COMMIT_TOOL, {"commit_token": envelope["commit_token"]})
        again = await client.call_tool(COMMIT_TOOL, {"commit_token": envelope["commit_token"]})
        missing = await client.call_tool(COMMIT_TOOL, {})
    assert committed.is_error is False
    assert committed.structured_content is not None and committed.structured_content["state"] == "confirmed"
    assert again.is_error is True and "P-PRECOND-COMMIT-TOKEN" in again.content[0].text  # type: ignore[union-attr]
    assert missing.is_error is True
    assert [e["kind"] for e in harness.ledger()] == ["reserve", "confirm"]
