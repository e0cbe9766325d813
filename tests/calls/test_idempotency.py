"""One execution per idempotency key: concurrent duplicates, replays, mismatches and restarts."""

from __future__ import annotations

import asyncio

from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.calls.envelope import CallConstraints, CallStatus
from colonnade.governance.principal import Principal, PrincipalKind
from tests.calls.conftest import Harness, build_harness


def _comparable(result: object) -> dict[str, object]:
    data = result.model_dump(mode="json")  # type: ignore[attr-defined]
    return {k: data[k] for k in ("status", "output", "error", "provenance", "side_effects")}


async def test_twenty_concurrent_duplicates_execute_once(harness: Harness) -> None:
    key = CallConstraints(idempotency_key="order-20")
    results = await asyncio.gather(
        *(harness.call("create_effect", input={"note": "twenty"}, constraints=key) for _ in range(20))
    )
    effects = [e for e in harness.ledger() if e["kind"] == "effect"]
    assert len(effects) == 1
    assert all(r.status is CallStatus.SUCCESS for r in results)
    first = _comparable(results[0])
    assert all(_comparable(r) == first for r in results)
    assert len({r.call_id for r in results}) == 20  # each caller gets its own call_id back
    assert sum(any(w.startswith("replay of") for w in r.warnings) for r in results) == 19


async def test_completed_outcome_is_replayed(harness: Harness) -> None:
    key = CallConstraints(idempotency_key="order-replay")
    first = await harness.call("create_effect", input={"note": "a"}, constraints=key)
    second = await harness.call("create_effect", input={"note": "a"}, constraints=key)
    assert first.output == second.output
    assert [e["kind"] for e in harness.ledger()] == ["effect"]


async def test_same_key_with_different_input_is_refused(harness: Harness) -> None:
    key = CallConstraints(idempotency_key="order-mismatch")
    await harness.call("create_effect", input={"note": "a"}, constraints=key)
    other = await harness.call("create_effect", input={"note": "b"}, constraints=key)
    assert other.status is CallStatus.INVALID_REQUEST
    assert other.error is not None and other.error.code == "I-REQ-IDEMPOTENCY-MISMATCH"
    assert len(harness.ledger()) == 1


async def test_concurrent_mismatch_is_refused_while_in_flight(harness: Harness) -> None:
    key = CallConstraints(idempotency_key="order-race")
    slow = harness.call("create_effect", "slow:300", input={"note": "a"}, constraints=key)
    other = harness.call("create_effect", input={"note": "b"}, constraints=key)
    first, second = await asyncio.gather(slow, other)
    assert first.status is CallStatus.SUCCESS
    assert second.error is not None and second.error.code == "I-REQ-IDEMPOTENCY-MISMATCH"


async def test_keys_are_scoped_by_principal(harness: Harness) -> None:
    key = CallConstraints(idempotency_key="shared-key")
    ann, bob = (Principal(PrincipalKind.USER, name) for name in ("ann", "bob"))
    await harness.call("create_effect", input={"note": "a"}, constraints=key, principal=ann)
    await harness.call("create_effect", input={"note": "a"}, constraints=key, principal=bob)
    assert len(harness.ledger()) == 2


async def test_a_caller_asserted_actor_id_does_not_change_the_scope(harness: Harness) -> None:
    """Who calls is the principal; a body field naming another actor cannot reach a fresh scope."""
    from colonnade.calls.envelope import CallContext

    key = CallConstraints(idempotency_key="shared-key")
    first = await harness.call(
        "create_effect", input={"note": "a"}, constraints=key, context=CallContext(actor_id="ann")
    )
    second = await harness.call(
        "create_effect", input={"note": "a"}, constraints=key, context=CallContext(actor_id="bob")
    )
    assert len(harness.ledger()) == 1
    assert second.output == first.output and any("replay" in w for w in second.warnings)


async def test_retryable_outcome_is_not_stored(harness: Harness) -> None:
    key = CallConstraints(idempotency_key="order-503")
    failed = await harness.call("create_effect", "503", input={"note": "x"}, constraints=key)
    assert failed.status is CallStatus.RETRYABLE_ERROR
    ok = await harness.call("create_effect", input={"note": "x"}, constraints=key)
    assert ok.status is CallStatus.SUCCESS
    assert len(harness.ledger()) == 1


async def test_outcome_survives_a_gateway_restart(harness: Harness, empty_engine: AsyncEngine) -> None:
    key = CallConstraints(idempotency_key="order-restart")
    before = await harness.call("create_effect", input={"note": "restart"}, constraints=key)
    restarted, built = await build_harness(empty_engine, harness.fault_url)  # a new gateway, same database
    try:
        after = await restarted.call("create_effect", input={"note": "restart"}, constraints=key)
        many = await asyncio.gather(
            *(restarted.call("create_effect", input={"note": "restart"}, constraints=key) for _ in range(20))
        )
    finally:
        await built.aclose()
    assert after.output == before.output
    assert all(r.output == before.output for r in many)
    assert len(harness.ledger()) == 1


async def test_mcp_clients_send_an_idempotency_key_in_meta(harness: Harness) -> None:
    """`_meta["colonnade/request"]` carries envelope fields over MCP; bad ones are listed, not ignored."""
    from mcp import Client

    from colonnade.calls.envelope import REQUEST_META_KEY
    from colonnade.surfaces.mcp.server import McpSurface

    surface = McpSurface(harness.catalog, harness.service)
    envelope = {
        "constraints": {"idempotency_key": "mcp-key-1", "timeout_ms": 5_000},
        "call_id": "call-from-mcp",
    }
    async with Client(surface.server) as client:
        first = await client.call_tool(
            "chaos__faults__create_effect",
            {"note": "via mcp"},
            meta={REQUEST_META_KEY: envelope},  # type: ignore[arg-type]
        )
        second = await client.call_tool(
            "chaos__faults__create_effect",
            {"note": "via mcp"},
            meta={REQUEST_META_KEY: envelope},  # type: ignore[arg-type]
        )
        wrong = await client.call_tool(
            "chaos__faults__create_effect",
            {"note": "x"},
            meta={REQUEST_META_KEY: {"constraints": {"timeout_ms": "soon"}, "colour": 1}},  # type: ignore[arg-type]
        )
    assert first.is_error is False and second.is_error is False
    assert first.structured_content == second.structured_content
    assert dict((first.meta or {})["colonnade/result"])["call_id"] == "call-from-mcp"
    assert len([e for e in harness.ledger() if e["kind"] == "effect"]) == 1
    rejected = dict((wrong.meta or {})["colonnade/result"])
    assert wrong.is_error is True and rejected["error"]["code"] == "I-REQ-ENVELOPE"
    pointers = {v["pointer"] for v in rejected["error"]["details"]["violations"]}
    assert {
        "/_meta/colonnade~1request/constraints/timeout_ms",
        "/_meta/colonnade~1request/colour",
    } <= pointers
