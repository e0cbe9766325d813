"""The approval desk on SQLite and PostgreSQL: expiry, one winner among concurrent decisions and
redemptions, tokens bound to the call, every refusal audited.

The desk's clock is a test clock, so expiry is shown by moving it, never by waiting.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.calls.approvals import (
    ApprovalCoordinator,
    ApprovalDesk,
    ApprovalSigner,
    CallFacts,
    TokenRefused,
)
from colonnade.calls.call import Call
from colonnade.calls.envelope import CallRequest, CallStatus
from colonnade.calls.manifest import Manifests
from colonnade.calls.parking import ParkedCalls
from colonnade.catalog.catalog import Catalog
from colonnade.config import ApprovalSettings
from colonnade.governance.audit import AuditLog
from colonnade.governance.personas import PERSONA_SCOPES, Persona
from colonnade.governance.principal import Principal, PrincipalKind
from colonnade.governance.refusals import ApprovalState, NotApprover, SelfApproval, UnknownResource
from colonnade.store.approvals_repo import ApprovalStore
from colonnade.store.audit_repo import AuditFilter, AuditStore
from colonnade.store.parked_calls_repo import ParkedCallStore
from tests.support.tenant_contracts import tenant_contract

KEY = b"a" * 32


class Clock:
    def __init__(self) -> None:
        self.now = datetime.now(UTC).timestamp()

    def __call__(self) -> float:
        return self.now


def _person(name: str, persona: str = "admin", tenant: str = "acme") -> Principal:
    scopes = PERSONA_SCOPES[Persona(persona)]
    return Principal(PrincipalKind.USER, name, tenant=tenant, persona=persona, scopes=scopes)


ALICE, BOB, CAROL = _person("alice"), _person("bob"), _person("carol")
FACTS = CallFacts(
    tool="acme:billing:void_invoice",
    version="1.0.0",
    tenant="acme",
    input={"invoice_id": "INV-1"},
    input_hash="0" * 64,
    requester=ALICE,
    reasons=("destructive",),
    policy_version="p-1",
)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def desk(engine: AsyncEngine, tmp_path: Path, clock: Clock) -> ApprovalDesk:
    signer = ApprovalSigner.load_or_create(tmp_path / "approval.jwk")
    audit = AuditLog(AuditStore(engine), KEY)
    return ApprovalDesk(ApprovalStore(engine), signer, ApprovalSettings(), audit, clock=clock)


async def _ask(desk: ApprovalDesk, clock: Clock, approval_id: str, ttl_s: float = 3600) -> None:
    expires = datetime.fromtimestamp(clock.now, UTC) + timedelta(seconds=ttl_s)
    await desk.ask(approval_id, FACTS, expires)


async def _codes(desk: ApprovalDesk, kind: str) -> list[str | None]:
    assert desk.audit is not None
    return [row.code for row in await desk.audit.store.query(AuditFilter(kind=kind), limit=500)]


async def test_an_expired_request_cannot_be_approved(desk: ApprovalDesk, clock: Clock) -> None:
    await _ask(desk, clock, "ap_exp", ttl_s=60)
    clock.now += 61
    with pytest.raises(ApprovalState, match="expired"):
        await desk.approve(BOB, "ap_exp")
    assert "P-PRECOND-APPROVAL-STATE" in await _codes(desk, "approval.refuse")


async def test_an_expired_token_is_refused_and_the_approval_ends(desk: ApprovalDesk, clock: Clock) -> None:
    await _ask(desk, clock, "ap_tok")
    approved = await desk.approve(BOB, "ap_tok", "fine")
    assert approved.token is not None and approved.token_expires_at is not None
    lifetime = approved.token_expires_at - datetime.fromtimestamp(clock.now, UTC)
    assert lifetime <= timedelta(seconds=300)
    clock.now += 301
    with pytest.raises(TokenRefused) as refused:
        await desk.redeem(approved.token, FACTS)
    assert refused.value.code == "A-AUTH-APPROVAL-EXPIRED"
    assert (await desk.store.get("ap_tok")).state == "expired"  # type: ignore[union-attr]
    assert "A-AUTH-APPROVAL-EXPIRED" in await _codes(desk, "approval.refuse")


async def test_two_approvers_at_once_one_wins(desk: ApprovalDesk, clock: Clock) -> None:
    await _ask(desk, clock, "ap_race")
    outcomes = await asyncio.gather(
        desk.approve(BOB, "ap_race", "bob"),
        desk.deny(CAROL, "ap_race", "carol"),
        return_exceptions=True,
    )
    winners = [outcome for outcome in outcomes if not isinstance(outcome, BaseException)]
    losers = [outcome for outcome in outcomes if isinstance(outcome, BaseException)]
    assert len(winners) == 1 and len(losers) == 1 and isinstance(losers[0], ApprovalState)
    stored = await desk.store.get("ap_race")
    assert stored is not None and stored.approver == winners[0].approver
    decisions = await _codes(desk, "approval.approve") + await _codes(desk, "approval.deny")
    assert len(decisions) == 1


async def test_a_token_is_spent_once_even_when_presented_twice_at_once(
    desk: ApprovalDesk, clock: Clock
) -> None:
    await _ask(desk, clock, "ap_twice")
    token = (await desk.approve(BOB, "ap_twice")).token
    assert token is not None
    outcomes = await asyncio.gather(
        desk.redeem(token, FACTS), desk.redeem(token, FACTS), return_exceptions=True
    )
    refused = [outcome for outcome in outcomes if isinstance(outcome, TokenRefused)]
    assert len(refused) == 1 and refused[0].code == "A-AUTH-APPROVAL-REPLAY"


async def test_the_token_is_bound_to_the_call(desk: ApprovalDesk, clock: Clock) -> None:
    await _ask(desk, clock, "ap_bound")
    token = (await desk.approve(BOB, "ap_bound")).token
    assert token is not None
    cases = {
        "A-AUTH-APPROVAL-ARGUMENTS": replace(FACTS, input_hash="1" * 64),
        "A-AUTH-APPROVAL-TOKEN": replace(FACTS, requester=CAROL),
    }
    for code, facts in cases.items():
        with pytest.raises(TokenRefused) as refused:
            await desk.redeem(token, facts)
        assert refused.value.code == code
    for other in (
        replace(FACTS, tenant="globex"),
        replace(FACTS, policy_version="p-2"),
        replace(FACTS, version="2.0.0"),
    ):
        with pytest.raises(TokenRefused) as refused:
            await desk.redeem(token, other)
        assert refused.value.code == "A-AUTH-APPROVAL-TOKEN"
    assert (await desk.redeem(token, FACTS)).state == "used"  # the refusals spent nothing


async def test_a_token_signed_by_another_key_is_refused(
    desk: ApprovalDesk, clock: Clock, tmp_path: Path
) -> None:
    await _ask(desk, clock, "ap_forged")
    approved = await desk.approve(BOB, "ap_forged")
    other = ApprovalDesk(desk.store, ApprovalSigner.load_or_create(tmp_path / "other.jwk"), clock=clock)
    assert approved.token is not None
    claims = desk.signer.verify(approved.token)
    forged = other.signer.sign(claims)
    with pytest.raises(TokenRefused) as refused:
        await desk.redeem(forged, FACTS)
    assert refused.value.code == "A-AUTH-APPROVAL-TOKEN"
    assert (await desk.store.get("ap_forged")).state == "approved"  # type: ignore[union-attr]


async def test_who_may_decide(desk: ApprovalDesk, clock: Clock) -> None:
    await _ask(desk, clock, "ap_who")
    with pytest.raises(SelfApproval):
        await desk.approve(ALICE, "ap_who")
    with pytest.raises(SelfApproval):  # alice under a second name (user:user:alice) is still alice
        await desk.approve(_person("user:alice"), "ap_who")
    with pytest.raises(NotApprover):
        await desk.approve(_person("dan", "product_owner"), "ap_who")
    with pytest.raises(UnknownResource):
        await desk.approve(_person("erin", tenant="globex"), "ap_who")
    assert [record.id for record in await desk.list(BOB)] == ["ap_who"]
    assert await desk.list(_person("erin", tenant="globex")) == []
    assert (await desk.store.get("ap_who")).state == "pending"  # type: ignore[union-attr]
    codes = await _codes(desk, "approval.refuse")
    assert {"A-AUTH-APPROVAL-SELF", "A-AUTH-APPROVER"} <= set(codes)


async def test_approvers_are_configured_per_api(engine: AsyncEngine, tmp_path: Path, clock: Clock) -> None:
    settings = ApprovalSettings(approvers={"acme:billing": ["product_owner"]})
    desk = ApprovalDesk(
        ApprovalStore(engine), ApprovalSigner.load_or_create(tmp_path / "k.jwk"), settings, clock=clock
    )
    await _ask(desk, clock, "ap_po")
    with pytest.raises(NotApprover):
        await desk.approve(BOB, "ap_po")
    approved = await desk.approve(_person("dan", "product_owner"), "ap_po")
    assert approved.state == "approved" and approved.approver == "user:dan"


async def test_the_sweep_expires_a_call_nobody_decided_on(desk: ApprovalDesk, engine: AsyncEngine) -> None:
    catalog = Catalog()
    catalog.publish(tenant_contract("acme", "items", "http://127.0.0.1:9"))
    tool = catalog.get("acme:items:drop_item")
    assert tool is not None
    call = Call.start(
        CallRequest(tool_id=tool.canonical_name, input={"item_id": "I-9"}),
        tool,
        Manifests().for_tool(tool),
        principal=ALICE,
    )
    parked = ParkedCalls(ParkedCallStore(engine))
    coordinator = ApprovalCoordinator(desk, parked, request_ttl_s=0.001)
    result = await coordinator.park(call)
    assert result.status is CallStatus.PENDING and result.pending is not None
    approval_id = result.pending.token
    await asyncio.sleep(0.01)  # past the 1 ms the request may wait
    assert await parked.sweep() == 1
    stored = await desk.store.get(approval_id)
    assert stored is not None and stored.state == "expired"
    with pytest.raises(ApprovalState):
        await desk.approve(BOB, approval_id)
    assert await _codes(desk, "approval.expire") == [None]


async def test_finished_approvals_are_purged_after_retention_pending_ones_never(
    desk: ApprovalDesk, clock: Clock
) -> None:
    for approval_id in ("ap_pending", "ap_denied", "ap_used", "ap_approved", "ap_expired"):
        await _ask(desk, clock, approval_id, ttl_s=60)
    await desk.deny(BOB, "ap_denied", "no")
    used = await desk.approve(BOB, "ap_used")
    assert used.token is not None
    await desk.redeem(used.token, FACTS)
    await desk.approve(BOB, "ap_approved")
    await desk.expire("ap_expired")
    retention_s = ApprovalSettings().retention_s
    asked = datetime.fromtimestamp(clock.now, UTC)

    assert await desk.store.purge_finished(retention_s=retention_s, now=asked + timedelta(days=29)) == 0
    # 400 s past retention: denied, used and expired go; the approved one's token
    # expired 5 minutes after approval, more than `retention_s` ago, so it goes too.
    later = asked + timedelta(seconds=retention_s + 400)
    assert await desk.store.purge_finished(retention_s=retention_s, now=later) == 4
    # The pending one's request expired long ago, yet only the sweep of parked calls ends it.
    assert [record.id for record in await desk.store.list()] == ["ap_pending"]
    assert await desk.store.purge_finished(retention_s=retention_s, now=later + timedelta(days=365)) == 0


async def test_an_approved_call_is_kept_while_its_token_may_still_run(
    desk: ApprovalDesk, clock: Clock
) -> None:
    await _ask(desk, clock, "ap_fresh")
    await _ask(desk, clock, "ap_no")
    await desk.approve(BOB, "ap_fresh")
    await desk.deny(BOB, "ap_no")
    now = datetime.fromtimestamp(clock.now, UTC)
    assert await desk.store.purge_finished(retention_s=60, now=now + timedelta(seconds=120)) == 1
    assert [record.id for record in await desk.store.list()] == ["ap_fresh"]
