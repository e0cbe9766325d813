"""The audit stage when the record cannot be made durable: never "terminal, retry later" for a call
that ran, never an answer past the deadline; the same on SQLite and PostgreSQL.

The backend is a stand-in stage that notes the hand-over exactly as the execute stage does
(`dispatch_of`), then answers; the audit log is the real one on a real database, broken for real:
its table renamed away (a failed write), or locked by another connection (a write that does not
answer).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.calls.call import Call
from colonnade.calls.decision_note import note_dispatch
from colonnade.calls.envelope import CallConstraints, CallResult, CallStatus
from colonnade.calls.pipeline import Next, Pipeline
from colonnade.calls.stages.audit import Audit
from colonnade.calls.stages.deadline import DeadlineCheck
from colonnade.calls.stages.execute import dispatch_of
from colonnade.catalog.catalog import Catalog
from colonnade.governance.audit import AuditLog
from colonnade.store.audit_repo import AuditStore
from tests.calls.stages.conftest import resolved
from tests.support.loop_lag import loop_lag
from tests.support.store_faults import locked_table

SLACK_S = 0.05  # past the deadline, besides the loop's own lag


class _Backend:
    """Stands in for the execute stage: notes the hand-over (unless `reaches` is False), then answers."""

    def __init__(self, *, reaches: bool = True, takes_s: float = 0.0) -> None:
        self.reaches = reaches
        self.takes_s = takes_s
        self.ran = 0
        self.seen = 0

    async def __call__(self, call: Call, next: Next) -> CallResult:
        self.seen += 1
        if self.reaches:
            note_dispatch(dispatch_of(call))
            self.ran += 1
        await asyncio.sleep(self.takes_s)
        status = CallStatus.SUCCESS if self.reaches else CallStatus.INVALID_REQUEST
        return call.result(status, output={"ran": self.reaches})


@pytest.fixture
async def log(engine: AsyncEngine) -> AsyncIterator[AuditLog]:
    audit = AuditLog(AuditStore(engine), b"k" * 32)
    yield audit
    await audit.store.aclose()


async def _rename(engine: AsyncEngine, old: str, new: str) -> None:
    async with engine.begin() as conn:
        await conn.execute(text(f"ALTER TABLE {old} RENAME TO {new}"))


async def _recorded_call_ids(log: AuditLog) -> list[str | None]:
    return [record.call_id for record in await log.store.scan()]


def _code(result: CallResult) -> str:
    assert result.error is not None, result
    return result.error.code


async def test_a_keyed_call_that_ran_is_answered_resend_with_the_same_key_and_its_record_lands_later(
    log: AuditLog, engine: AsyncEngine, catalog: Catalog
) -> None:
    audit, backend = Audit(log), _Backend()
    pipeline = Pipeline([audit, DeadlineCheck(), backend])
    call = resolved(
        catalog,
        "acme:crm:create_customer",
        constraints=CallConstraints(idempotency_key="pay-1", timeout_ms=5_000),
    )
    await _rename(engine, "audit_records", "audit_away")
    answer = await pipeline.run(call)
    assert backend.ran == 1
    assert answer.status is CallStatus.RETRYABLE_ERROR and _code(answer) == "R-CAP-STORE-UNRECORDED", answer
    assert answer.error is not None and "same idempotency_key" in answer.error.fix
    assert "may have happened" in answer.error.fix and "never resend it with a new key" in answer.error.fix
    assert answer.error.details["withheld_status"] == "success" and answer.error.details["retry_after_ms"] > 0
    assert answer.side_effects == ["write"] and answer.output is None  # the result itself is withheld
    await _rename(engine, "audit_away", "audit_records")
    await audit.drain()  # the record of a call that ran is appended again until the log takes it
    records = [r for r in await log.store.scan() if r.call_id == call.request.call_id]
    assert [(r.outcome, r.code) for r in records] == [("success", None)]


@pytest.mark.parametrize(
    ("tool", "status", "code"),
    [
        ("acme:crm:create_customer", CallStatus.TERMINAL_ERROR, "S-TOOL-EFFECT-UNKNOWN-NO-KEY"),
        ("acme:crm:get_customer", CallStatus.RETRYABLE_ERROR, "R-CAP-STORE-UNRECORDED"),  # idempotent
    ],
)
async def test_an_unkeyed_call_that_ran_is_effect_unknown_unless_it_is_safe_to_run_again(
    log: AuditLog, engine: AsyncEngine, catalog: Catalog, tool: str, status: CallStatus, code: str
) -> None:
    audit = Audit(log)
    pipeline = Pipeline([audit, DeadlineCheck(), _Backend()])
    await _rename(engine, "audit_records", "audit_away")
    answer = await pipeline.run(resolved(catalog, tool))
    assert answer.status is status and _code(answer) == code, answer
    assert answer.error is not None and answer.error.details.get("withheld_status") == "success"
    if code == "S-TOOL-EFFECT-UNKNOWN-NO-KEY":
        assert answer.error.details["cause"] == "R-CAP-STORE-UNRECORDED"
    await _rename(engine, "audit_away", "audit_records")
    await audit.drain()


async def test_a_call_that_did_not_run_is_answered_retry_when_its_record_fails(
    log: AuditLog, engine: AsyncEngine, catalog: Catalog
) -> None:
    audit, backend = Audit(log), _Backend(reaches=False)
    pipeline = Pipeline([audit, DeadlineCheck(), backend])
    await _rename(engine, "audit_records", "audit_away")
    answer = await pipeline.run(resolved(catalog, "acme:crm:create_customer"))
    assert answer.status is CallStatus.RETRYABLE_ERROR and _code(answer) == "R-CAP-STORE-UNAVAILABLE", answer
    assert answer.error is not None and "did not run" in answer.error.message and answer.side_effects == []
    refused = await pipeline.run(resolved(catalog, "acme:crm:create_customer"))
    assert _code(refused) == "R-CAP-STORE-UNAVAILABLE" and backend.seen == 1  # fail closed meanwhile
    await _rename(engine, "audit_away", "audit_records")


@pytest.mark.parametrize(
    ("reaches", "status", "code"),
    [
        (True, CallStatus.RETRYABLE_ERROR, "R-TIMEOUT-UNRECORDED"),  # a success: withheld
        (False, CallStatus.INVALID_REQUEST, None),  # an error: nothing to withhold, answered as is
    ],
)
async def test_a_store_that_does_not_answer_is_not_waited_for_past_the_deadline(
    log: AuditLog, engine: AsyncEngine, catalog: Catalog, reaches: bool, status: CallStatus, code: str | None
) -> None:
    audit = Audit(log)
    pipeline = Pipeline([audit, DeadlineCheck(), _Backend(reaches=reaches, takes_s=0.1)])
    await pipeline.run(resolved(catalog, "acme:crm:get_customer"))  # the connection is open (no first use)
    constraints = CallConstraints(idempotency_key="slow-1", timeout_ms=300)
    call = resolved(catalog, "acme:crm:create_customer", constraints=constraints)
    async with loop_lag() as lag, locked_table(engine, "audit_records"):
        answer = await pipeline.run(call)
        took_s = time.perf_counter() - call.started
        await asyncio.sleep(0.5)  # the lock outlives the deadline by far: an unbounded wait shows
    assert answer.status is status, answer
    assert code is None or _code(answer) == code
    assert took_s <= 0.3 + SLACK_S + lag.worst_ms / 1000, f"answered after {took_s * 1000:.0f} ms"
    await audit.drain()  # the record was still under way at the deadline; it lands once the lock is gone
    assert call.request.call_id in await _recorded_call_ids(log)
