"""The whole call road through approval on SQLite and PostgreSQL: the gateway built from parts on the
store under test, calls made by principals through the call service, effects counted in a real
backend's ledger. Ask, approve, run once with the token; replay, argument swap and a second run of
a resumed call are refused; two approvers at once leave one decision."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.calls.approvals import ApprovalDesk
from colonnade.calls.envelope import CallRequest, CallResult, CallStatus
from colonnade.catalog.catalog import Catalog
from colonnade.config import Settings
from colonnade.governance.personas import PERSONA_SCOPES, Persona
from colonnade.governance.principal import Principal, PrincipalKind
from colonnade.governance.refusals import ApprovalState
from colonnade.runtime.gateway import Gateway
from tests.support.fault_backend import FaultBackend, create_app
from tests.support.loopback import serve_in_thread
from tests.support.tenant_contracts import tenant_contract

DROP = "acme:items:drop_item"
ADMIN = PERSONA_SCOPES[Persona.ADMIN]
ALICE, BOB, CAROL = (
    Principal(PrincipalKind.USER, name, tenant="acme", persona="admin", scopes=ADMIN)
    for name in ("alice", "bob", "carol")
)


@pytest.fixture
def backend() -> Iterator[tuple[FaultBackend, str]]:
    ledger = FaultBackend()
    with serve_in_thread(create_app(ledger)) as url:
        yield ledger, url


@pytest.fixture
async def gateway(
    engine: AsyncEngine, tmp_path: Path, backend: tuple[FaultBackend, str]
) -> AsyncIterator[Gateway]:
    catalog = Catalog()
    catalog.publish(tenant_contract("acme", "items", backend[1]))
    built = Gateway(Settings(data_dir=tmp_path / "data", manifests_dir=None), engine=engine, catalog=catalog)
    try:
        yield built
    finally:
        await built.aclose()


def _desk(gateway: Gateway) -> ApprovalDesk:
    assert gateway.governance.approvals is not None
    return gateway.governance.approvals


async def _call(gateway: Gateway, who: Principal, token: str | None = None, **arguments: Any) -> CallResult:
    request = CallRequest(tool_id=DROP, input=arguments, approval_token=token)
    return await gateway.calls.call(request, who)


def _drops(backend: tuple[FaultBackend, str], item: str) -> int:
    return sum(1 for effect in backend[0].ledger if effect["kind"] == "drop" and effect["item_id"] == item)


async def test_ask_approve_run_once(gateway: Gateway, backend: tuple[FaultBackend, str]) -> None:
    asked = await _call(gateway, ALICE, item_id="P-1")
    assert asked.status is CallStatus.PENDING and asked.pending is not None
    approval = asked.pending.token
    assert _drops(backend, "P-1") == 0

    token = (await _desk(gateway).approve(BOB, approval, "ok")).token
    swapped = await _call(gateway, ALICE, token, item_id="P-2")
    assert swapped.error is not None and swapped.error.code == "A-AUTH-APPROVAL-ARGUMENTS"
    ran = await _call(gateway, ALICE, token, item_id="P-1")
    assert ran.status is CallStatus.SUCCESS, ran.error
    replayed = await _call(gateway, ALICE, token, item_id="P-1")
    assert replayed.error is not None and replayed.error.code == "A-AUTH-APPROVAL-REPLAY"
    assert _drops(backend, "P-1") == 1 and _drops(backend, "P-2") == 0


async def test_resume_runs_the_parked_call_once(gateway: Gateway, backend: tuple[FaultBackend, str]) -> None:
    asked = await _call(gateway, ALICE, item_id="R-1")
    assert asked.pending is not None
    approval = asked.pending.token
    assert gateway.approvals is not None
    with pytest.raises(ApprovalState):
        await gateway.approvals.resume_as(ALICE, approval)
    await _desk(gateway).approve(BOB, approval)
    first, second = await asyncio.gather(
        gateway.approvals.resume_as(ALICE, approval),
        gateway.approvals.resume_as(BOB, approval),
        return_exceptions=True,
    )
    outcomes = sorted(
        "refused" if isinstance(outcome, BaseException) or outcome.status is not CallStatus.SUCCESS else "ran"
        for outcome in (first, second)
    )
    assert outcomes == ["ran", "refused"]
    assert _drops(backend, "R-1") == 1


async def test_two_approvers_at_once_leave_one_decision(
    gateway: Gateway, backend: tuple[FaultBackend, str]
) -> None:
    asked = await _call(gateway, ALICE, item_id="C-1")
    assert asked.pending is not None
    approval = asked.pending.token
    decided = await asyncio.gather(
        _desk(gateway).approve(BOB, approval), _desk(gateway).approve(CAROL, approval), return_exceptions=True
    )
    assert sum(isinstance(outcome, ApprovalState) for outcome in decided) == 1
    stored = await _desk(gateway).store.get(approval)
    assert stored is not None and stored.state == "approved" and stored.approver in ("user:bob", "user:carol")
    assert _drops(backend, "C-1") == 0
