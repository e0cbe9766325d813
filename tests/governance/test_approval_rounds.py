"""Answer rounds of approved calls on SQLite and PostgreSQL: taken once, by the requester, for the
same call, with the approval's own token; every refusal audited and none spends the round."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.calls.approvals import ApprovalCoordinator, ApprovalDesk, ApprovalSigner
from colonnade.calls.call import Call
from colonnade.calls.envelope import CallRequest, CallResult
from colonnade.calls.manifest import Manifests
from colonnade.calls.parking import ParkedCalls, ParkReason
from colonnade.catalog.catalog import Catalog
from colonnade.config import ApprovalSettings
from colonnade.governance.audit import AuditLog
from colonnade.governance.personas import PERSONA_SCOPES, Persona
from colonnade.governance.principal import Principal, PrincipalKind
from colonnade.store.approvals_repo import ApprovalRecord, ApprovalStore
from colonnade.store.audit_repo import AuditFilter, AuditStore
from colonnade.store.parked_calls_repo import ParkedCallStore
from tests.support.tenant_contracts import tenant_contract

TOOL = "acme:items:drop_item"


def _person(name: str) -> Principal:
    return Principal(
        PrincipalKind.USER, name, tenant="acme", persona="admin", scopes=PERSONA_SCOPES[Persona.ADMIN]
    )


ALICE, BOB, CAROL = _person("alice"), _person("bob"), _person("carol")
ALICE_OF_GLOBEX = Principal(
    PrincipalKind.USER, "alice", tenant="globex", persona="admin", scopes=PERSONA_SCOPES[Persona.ADMIN]
)
"""Another tenant's user with alice's id: the same principal key, not the same caller."""


@pytest.fixture
def coordinator(engine: AsyncEngine, tmp_path: Path) -> ApprovalCoordinator:
    signer = ApprovalSigner.load_or_create(tmp_path / "approval.jwk")
    desk = ApprovalDesk(
        ApprovalStore(engine), signer, ApprovalSettings(), AuditLog(AuditStore(engine), b"k" * 32)
    )
    return ApprovalCoordinator(desk, ParkedCalls(ParkedCallStore(engine)), request_ttl_s=3600)


def _call(item: str = "I-1", principal: Principal = ALICE, token: str | None = None) -> Call:
    catalog = Catalog()
    catalog.publish(tenant_contract("acme", "items", "http://127.0.0.1:9"))
    tool = catalog.get(TOOL)
    assert tool is not None
    request = CallRequest(tool_id=TOOL, input={"item_id": item}, approval_token=token)
    return Call.start(request, tool, Manifests().for_tool(tool), principal=principal)


async def _approved(coordinator: ApprovalCoordinator, item: str) -> tuple[ApprovalRecord, str]:
    """An approval for dropping `item`, approved by Bob and spent by Alice's call: (it, its token)."""
    parked = await coordinator.park(_call(item))
    assert parked.pending is not None
    approved = await coordinator.desk.approve(BOB, parked.pending.token)
    assert approved.token is not None
    redeemed = await coordinator.redeem(_call(item, token=approved.token), approved.token)
    assert isinstance(redeemed, ApprovalRecord), redeemed
    return redeemed, approved.token


def _code(taken: Any) -> str | None:
    assert isinstance(taken, CallResult), taken
    return taken.error.code if taken.error is not None else None


async def _take(coordinator: ApprovalCoordinator, call: Call, round_token: str) -> Any:
    return await coordinator.rounds.take(
        call, round_token, coordinator.facts(call), call.request.approval_token
    )


async def test_a_round_is_taken_once_by_its_requester_for_the_same_call(
    coordinator: ApprovalCoordinator,
) -> None:
    approval, token = await _approved(coordinator, "I-1")
    round_token = await coordinator.rounds.hold(_call("I-1"), approval.id, approval.token_expires_at)
    assert round_token is not None

    # Refused without spending the round: another caller, other arguments, another approval's token.
    other, other_token = await _approved(coordinator, "I-2")
    assert _code(await _take(coordinator, _call("I-1", CAROL), round_token)) == "A-AUTH-APPROVAL-TOKEN"
    assert (
        _code(await _take(coordinator, _call("I-1", ALICE_OF_GLOBEX), round_token)) == "A-AUTH-APPROVAL-TOKEN"
    )
    assert _code(await _take(coordinator, _call("I-3"), round_token)) == "A-AUTH-APPROVAL-ARGUMENTS"
    assert (
        _code(await _take(coordinator, _call("I-1", token=other_token), round_token))
        == "A-AUTH-APPROVAL-TOKEN"
    )
    assert _code(await _take(coordinator, _call("I-1"), "pk_never-handed-out")) == "A-AUTH-APPROVAL-TOKEN"

    taken = await _take(coordinator, _call("I-1", token=token), round_token)
    assert isinstance(taken, tuple) and taken[0].id == approval.id
    assert _code(await _take(coordinator, _call("I-1", token=token), round_token)) == "A-AUTH-APPROVAL-REPLAY"
    assert other.id != approval.id

    audit = coordinator.desk.audit
    assert audit is not None
    refused = [row.code for row in await audit.store.query(AuditFilter(kind="approval.refuse"), limit=50)]
    assert sorted(refused) == sorted(
        ["A-AUTH-APPROVAL-TOKEN"] * 4 + ["A-AUTH-APPROVAL-ARGUMENTS", "A-AUTH-APPROVAL-REPLAY"]
    )
    used = await audit.store.query(AuditFilter(kind="approval.use"), limit=50)
    assert sum(1 for row in used if (row.details or {}).get("round") == "answer") == 1


async def test_two_answers_at_once_one_runs(coordinator: ApprovalCoordinator) -> None:
    approval, token = await _approved(coordinator, "I-4")
    round_token = await coordinator.rounds.hold(_call("I-4"), approval.id, approval.token_expires_at)
    assert round_token is not None
    outcomes = await asyncio.gather(
        *(_take(coordinator, _call("I-4", token=token), round_token) for _ in range(4))
    )
    assert sum(isinstance(outcome, tuple) for outcome in outcomes) == 1
    assert {_code(outcome) for outcome in outcomes if not isinstance(outcome, tuple)} == {
        "A-AUTH-APPROVAL-REPLAY"
    }


async def test_a_round_ends_with_its_approvals_time(coordinator: ApprovalCoordinator) -> None:
    approval, _ = await _approved(coordinator, "I-5")
    past = datetime.now(UTC) - timedelta(seconds=1)
    assert await coordinator.rounds.hold(_call("I-5"), approval.id, past) is None
    soon = datetime.now(UTC) + timedelta(milliseconds=50)
    round_token = await coordinator.rounds.hold(_call("I-5"), approval.id, soon)
    assert round_token is not None
    await asyncio.sleep(0.1)
    assert _code(await _take(coordinator, _call("I-5"), round_token)) == "A-AUTH-APPROVAL-EXPIRED"
    assert await coordinator.parked.sweep() >= 1
    resumed = await coordinator.parked.store.get(round_token)
    assert resumed is not None and resumed.state == "expired"


async def test_the_parked_path_admits_only_the_requester_or_its_approver(
    coordinator: ApprovalCoordinator,
) -> None:
    """Whoever calls the one resume path directly: a third party is refused (audited), the token kept."""
    parked = await coordinator.park(_call("I-9"))
    assert parked.pending is not None
    approval_id = parked.pending.token
    await coordinator.desk.approve(BOB, approval_id)
    for intruder in (CAROL, ALICE_OF_GLOBEX):
        refused = await coordinator.parked.resume(
            approval_id, ParkReason.AWAITING_APPROVAL, call_id=None, principal=intruder
        )
        assert _code(refused) == "A-AUTH-RESUME-PRINCIPAL"
    stored = await coordinator.parked.store.get(approval_id)
    assert stored is not None and stored.state == "parked"
    audit = coordinator.desk.audit
    assert audit is not None
    rows = await audit.store.query(AuditFilter(kind="approval.refuse"), limit=50)
    assert [row.code for row in rows if row.details.get("approval_id") == approval_id] == [
        "A-AUTH-RESUME-PRINCIPAL"
    ] * 2
