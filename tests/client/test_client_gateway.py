"""The Python client against a real governed gateway: real issuer, real backend with a ledger.

Each test proves one agent responsibility by its effect on the backend: a keyed write retried
after a forced 503 lands once, an approved destructive call runs once after a second person's
yes, a discarded two-phase call never confirms, and a commit token is its preparer's only.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from colonnade.calls.envelope import CallStatus, RetryPolicy
from colonnade.client import (
    ApprovalNotGranted,
    AsyncColonnade,
    Backoff,
    CallOptions,
    Colonnade,
    McpTransport,
    RestTransport,
)
from tests.support.governed import Governed, governed_gateway
from tests.support.machine_load import patient

WRITE = "acme:items:write_item"
READ = "acme:items:read_item"
DROP = "acme:items:drop_item"
RESERVE = "acme:holds:reserve"
FAST = Backoff(base_s=0.05, cap_s=0.2, budget_s=30.0)


@pytest.fixture(scope="module")
def governed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Governed]:
    with governed_gateway(tmp_path_factory.mktemp("client"), two_phase=True) as running:
        yield running


def _agent(governed: Governed, token: str) -> AsyncColonnade:
    return AsyncColonnade(RestTransport(governed.base_url, token=token), backoff=FAST)


def _effects(governed: Governed, kind: str, **match: str) -> list[dict[str, object]]:
    return [
        e for e in governed.effects() if e["kind"] == kind and all(e.get(k) == v for k, v in match.items())
    ]


async def test_a_keyed_write_that_met_a_503_is_retried_and_lands_once(governed: Governed) -> None:
    item = f"I-{uuid.uuid4().hex[:6]}"
    governed.backend.attempts.clear()
    once = CallOptions(retry_policy=RetryPolicy(max_attempts=1))  # the gateway answers the 503 itself
    arguments = {"item_id": item, "value": "v1", "fault": "flaky:1:503"}
    async with _agent(governed, governed.token("admin", sub="writer")) as agent:
        result = await agent.call(WRITE, arguments, once)
        again = await agent.call(WRITE, arguments, once)
    assert result.status is CallStatus.SUCCESS, result.error
    assert again.status is CallStatus.SUCCESS and again.output == result.output  # the stored outcome
    hits = [hit for hit in governed.backend_hits() if hit == ("PUT", f"/items/{item}")]
    assert len(hits) == 2, "the 503, then the client's retry; the repeat is answered by the gateway"
    puts = _effects(governed, "put", item_id=item)
    assert len(puts) == 1, puts
    assert puts[0]["key"]  # the call was keyed (the gateway hands the backend a key derived from ours)


async def test_a_destructive_call_waits_for_a_second_persons_approval_and_runs_once(
    governed: Governed,
) -> None:
    item = f"D-{uuid.uuid4().hex[:6]}"
    alice, bob = governed.token("admin", sub="alice"), governed.token("admin", sub="bob")
    async with _agent(governed, alice) as agent:
        waiting = asyncio.create_task(agent.call(DROP, {"item_id": item}, CallOptions(poll_s=0.05)))
        approval = await _pending_approval(governed, alice, item)
        assert not _effects(governed, "drop", item_id=item), "nothing runs before the approval"
        async with httpx2.AsyncClient(
            base_url=governed.base_url, headers={"Authorization": f"Bearer {bob}"}
        ) as bob_client:
            decided = await bob_client.post(f"/v1/approvals/{approval}/approve", json={"comment": "checked"})
        assert decided.status_code == 200, decided.text
        result = await asyncio.wait_for(waiting, patient(30))
    assert result.status is CallStatus.SUCCESS, result.error
    assert len(_effects(governed, "drop", item_id=item)) == 1


async def test_a_denied_approval_is_raised_and_nothing_runs(governed: Governed) -> None:
    item = f"N-{uuid.uuid4().hex[:6]}"
    alice, bob = governed.token("admin", sub="alice"), governed.token("admin", sub="bob")
    async with _agent(governed, alice) as agent:
        waiting = asyncio.create_task(agent.call(DROP, {"item_id": item}, CallOptions(poll_s=0.05)))
        approval = await _pending_approval(governed, alice, item)
        with governed.rest(bob) as client:
            assert (
                client.post(f"/v1/approvals/{approval}/deny", json={"comment": "wrong item"}).status_code
                == 200
            )
        with pytest.raises(ApprovalNotGranted, match="denied") as raised:
            await asyncio.wait_for(waiting, patient(30))
    assert raised.value.comment == "wrong item"
    assert not _effects(governed, "drop", item_id=item)


async def test_return_mode_hands_back_the_pending_call(governed: Governed) -> None:
    async with _agent(governed, governed.token("admin", sub="alice")) as agent:
        result = await agent.call(DROP, {"item_id": "R-1"}, CallOptions(approval="return"))
    assert result.status is CallStatus.PENDING and result.pending is not None
    assert result.pending.reason == "awaiting_approval"


async def test_behind_a_proxy_that_drops_the_version_header_the_sdk_still_reads_pending(
    governed: Governed,
) -> None:
    """The gateway then answers envelope version 1; the transport reads it back as version 2."""

    async def drop_version_header(request: httpx2.Request) -> None:
        del request.headers["colonnade-envelope-version"]

    async with httpx2.AsyncClient(timeout=30, event_hooks={"request": [drop_version_header]}) as http:
        token = governed.token("admin", sub="alice")
        agent = AsyncColonnade(RestTransport(governed.base_url, token=token, client=http), backoff=FAST)
        result = await agent.call(DROP, {"item_id": "V1-1"}, CallOptions(approval="return"))
        read = await agent.call("acme:items:read_item", {"item_id": "I-1"})
    assert result.status is CallStatus.PENDING and result.pending is not None, result
    assert result.pending.reason == "awaiting_approval" and result.pending.token.startswith("ap_")
    assert result.error is None
    assert read.status is CallStatus.SUCCESS and read.output == {"id": "I-1", "value": "one"}


async def test_a_discarded_two_phase_call_is_compensated_and_never_confirmed(governed: Governed) -> None:
    item = f"H-{uuid.uuid4().hex[:6]}"
    async with _agent(governed, governed.token("admin", sub="holder")) as agent:
        prepared = await agent.prepare(RESERVE, {"item_id": item})
        assert prepared.status is CallStatus.SUCCESS_PREP and prepared.commit_token
        discarded = await agent.discard(prepared)
        late = await agent.commit(prepared)
    assert discarded.status is CallStatus.SUCCESS, discarded.error
    assert late.status is not CallStatus.SUCCESS and late.error is not None
    assert late.error.code == "P-PRECOND-COMMIT-TOKEN"
    (reserved,) = _effects(governed, "reserve")[-1:]
    reservation = reserved["reservation_id"]
    assert len(_effects(governed, "cancel", reservation_id=str(reservation))) == 1
    assert not _effects(governed, "confirm", reservation_id=str(reservation))


async def test_a_commit_token_is_its_preparers_only(governed: Governed) -> None:
    async with _agent(governed, governed.token("admin", sub="preparer")) as owner:
        prepared = await owner.prepare(RESERVE, {"item_id": f"C-{uuid.uuid4().hex[:6]}"})
        assert prepared.commit_token
        async with _agent(governed, governed.token("admin", sub="someone-else")) as other:
            stolen = await other.commit(prepared)
        assert stolen.error is not None and stolen.error.code == "A-AUTH-RESUME-PRINCIPAL"
        committed = await owner.commit(prepared)
    assert committed.status is CallStatus.SUCCESS, committed.error


async def test_the_client_speaks_mcp_too(governed: Governed) -> None:
    token = governed.token("admin", sub="mcp-agent")
    item = f"M-{uuid.uuid4().hex[:6]}"
    async with governed.mcp(token) as session:
        agent = AsyncColonnade(McpTransport(session, rest=RestTransport(governed.base_url, token=token)))
        written = await agent.call(WRITE, {"item_id": item, "value": "over mcp"})
        read = await agent.call(READ, {"item_id": item})
        prepared = await agent.prepare(RESERVE, {"item_id": item})
        committed = await agent.commit(prepared)
        await agent.aclose()
    assert written.status is CallStatus.SUCCESS, written.error
    assert read.status is CallStatus.SUCCESS and read.output is not None
    assert committed.status is CallStatus.SUCCESS, committed.error
    (put,) = _effects(governed, "put", item_id=item)
    assert put["key"]


def test_the_sync_client_for_code_without_an_event_loop(governed: Governed) -> None:
    with Colonnade.rest(governed.base_url, token=governed.token("admin", sub="sync")) as agent:
        result = agent.call(READ, {"item_id": "I-1"})
        unknown = agent.call("acme:items:no_such_tool", {})
    assert result.status is CallStatus.SUCCESS, result.error
    assert unknown.status is CallStatus.INVALID_REQUEST and unknown.error is not None
    assert unknown.error.code == "I-REQ-UNKNOWN-TOOL"


async def _pending_approval(governed: Governed, token: str, item: str) -> str:
    """The id of the requester's pending approval for `item`, once the client's call has parked."""
    loop = asyncio.get_running_loop()
    end = loop.time() + patient(20)
    async with httpx2.AsyncClient(
        base_url=governed.base_url, headers={"Authorization": f"Bearer {token}"}
    ) as client:
        while loop.time() < end:
            answer = (await client.get("/v1/approvals", params={"state": "pending"})).json()
            for record in answer["approvals"]:
                if record["arguments"].get("item_id") == item:
                    return str(record["id"])
            await asyncio.sleep(0.05)
    raise AssertionError(f"no pending approval for {item}")


def test_an_unreachable_gateway_is_a_clear_error(tmp_path: Path) -> None:
    from colonnade.client import ClientError
    from tests.support.loopback import free_port

    with (
        Colonnade.rest(f"http://127.0.0.1:{free_port()}") as agent,
        pytest.raises(ClientError, match="no answer"),
    ):
        agent.call(READ, {"item_id": "I-1"})


async def test_a_skipped_step_is_recorded_in_the_audit_chain(governed: Governed) -> None:
    from colonnade.store.audit_repo import AuditFilter

    token = governed.token("admin", sub="planner")
    trace = uuid.uuid4().hex
    effects_before = len(governed.effects())
    async with _agent(governed, token) as agent:
        recorded = await agent.skip(DROP, "the user said to keep the item", trace_id=trace)
    assert recorded.status is CallStatus.SUCCESS, recorded.error
    assert recorded.output == {"recorded": True, "tool_id": DROP}
    audit = governed.running.gateway.governance.audit
    assert audit is not None
    rows = governed.running.run(audit.store.query(AuditFilter(kind="step.skip"), limit=100))
    (row,) = [row for row in rows if row.trace_id == trace]
    assert (row.tool, row.tenant, row.outcome) == (DROP, "acme", "skipped")
    assert row.details["reason"] == "the user said to keep the item"
    assert len(governed.effects()) == effects_before, "a skip runs nothing"


async def test_a_skip_needs_a_reason(governed: Governed) -> None:
    async with _agent(governed, governed.token("admin", sub="planner")) as agent:
        refused = await agent.skip(DROP, "")
    assert refused.status is CallStatus.INVALID_REQUEST and refused.error is not None
    assert refused.error.code == "I-REQ-SCHEMA"
