"""The audit stage: every call leaves one record (decision, reasons, outcome, argument hash, never
the arguments) before it is answered, and nothing runs while the audit log cannot be written."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import text

from colonnade.calls.call import Call
from colonnade.calls.envelope import CallResult, CallStatus
from colonnade.calls.pipeline import Next, Pipeline
from colonnade.calls.stages.audit import Audit
from colonnade.calls.stages.authorize import Authorize
from colonnade.catalog.catalog import Catalog
from colonnade.governance.audit import AuditLog
from colonnade.store import create_store_engine, migrate_engine
from colonnade.store.audit_repo import AuditStore
from tests.calls.stages.conftest import Reached, resolved
from tests.support.authorizers import OnlyPrefix


class _Last:
    """The stage that ends the call (in place of execution), passing to the fake `next`."""

    def __init__(self, reached: Reached) -> None:
        self.reached = reached

    async def __call__(self, call: Call, next: Next) -> CallResult:
        result = await self.reached(call)
        return result.model_copy(update={"side_effects": ["write"]})


@pytest.fixture
async def log(tmp_path: Path) -> AsyncIterator[AuditLog]:
    engine = create_store_engine(f"sqlite+aiosqlite:///{tmp_path / 'audit.db'}")
    await migrate_engine(engine)
    audit = AuditLog(AuditStore(engine), b"k" * 32)
    yield audit
    await audit.store.aclose()
    await engine.dispose()


def _pipeline(log: AuditLog, reached: Reached) -> Pipeline:
    return Pipeline([Audit(log), Authorize(OnlyPrefix("acme:crm:")), _Last(reached)])


async def test_allowed_and_refused_calls_are_recorded_with_their_decision(
    log: AuditLog, catalog: Catalog, reached: Reached
) -> None:
    pipeline = _pipeline(log, reached)
    allowed = resolved(catalog, "acme:crm:get_customer", input={"customer_id": "C-1001"})
    refused = resolved(catalog, "acme:billing:list_invoices")
    assert (await pipeline.run(allowed)).status is CallStatus.SUCCESS
    assert (await pipeline.run(refused)).error.code == "I-REQ-UNKNOWN-TOOL"  # type: ignore[union-attr]
    first, second = await log.store.scan()
    assert (first.tool, first.decision, first.outcome, first.code) == (
        "acme:crm:get_customer",
        "allow",
        "success",
        None,
    )
    assert first.args_hash == log.args_hash({"customer_id": "C-1001"}) and "C-1001" not in str(first.fields())
    assert first.trace_id == allowed.request.context.trace_id and first.call_id == allowed.request.call_id
    assert (second.tool, second.decision, second.code) == (
        "acme:billing:list_invoices",
        "deny",
        "I-REQ-UNKNOWN-TOOL",
    )
    assert second.reasons == ["not under acme:crm:"]
    assert [call.request.call_id for call in reached.calls] == [allowed.request.call_id]


async def test_nothing_runs_while_the_audit_log_cannot_be_written(
    log: AuditLog, catalog: Catalog, reached: Reached
) -> None:
    audit = Audit(log)
    pipeline = Pipeline([audit, Authorize(OnlyPrefix("acme:crm:")), _Last(reached)])
    engine = log.store._engine
    async with engine.begin() as conn:
        await conn.execute(text("ALTER TABLE audit_records RENAME TO away"))
    executed = await pipeline.run(resolved(catalog, "acme:crm:get_customer"))
    # `_Last` stands in for the backend without the execute stage's note: nothing reached a backend.
    assert executed.status is CallStatus.RETRYABLE_ERROR and executed.error is not None
    assert executed.error.code == "R-CAP-STORE-UNAVAILABLE" and "did not run" in executed.error.message
    assert executed.error.details["retry_after_ms"] > 0
    assert len(reached.calls) == 1 and not log.writable
    refused = await pipeline.run(resolved(catalog, "acme:crm:get_customer"))
    assert refused.error is not None and refused.error.code == "R-CAP-STORE-UNAVAILABLE"
    assert len(reached.calls) == 1 and refused.side_effects == []  # the second call never ran
    async with engine.begin() as conn:
        await conn.execute(text("ALTER TABLE away RENAME TO audit_records"))
    # The refusals' records are appended again in the background until the log takes them; the
    # first that lands makes the log writable again (which of them, and when, is up to the loop).
    await audit.drain()
    assert log.writable
    assert (await pipeline.run(resolved(catalog, "acme:crm:get_customer"))).status is CallStatus.SUCCESS
