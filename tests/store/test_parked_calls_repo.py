"""Parked calls are purged once finished and past retention; parked or busy ones never are."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.store.parked_calls_repo import ParkedCallStore, ParkedRecord, ParkedState
from colonnade.store.tables import ParkedCallRow

STATES: dict[str, ParkedState] = {
    "ct_resumed": "resumed",
    "ct_expired": "expired",
    "ct_failed": "failed",
    "ct_parked": "parked",
    "ct_resuming": "resuming",
    "ct_expiring": "expiring",
    "ct_recent": "resumed",
}


def _record(token: str, deadline: datetime) -> ParkedRecord:
    return ParkedRecord(
        token=token,
        reason="prepared",
        tool="acme:shop:reserve",
        version="1.0.0",
        principal="user:ann",
        input={},
        input_hash="0" * 64,
        payload=None,
        state="parked",
        deadline=deadline,
        attempts=0,
    )


async def test_finished_calls_are_purged_after_retention_and_open_ones_never(engine: AsyncEngine) -> None:
    parked = ParkedCallStore(engine)
    past = datetime.now(UTC) - timedelta(hours=2)
    for token, state in STATES.items():
        await parked.create(_record(token, past))
        if state in ("resumed", "failed"):
            assert await parked.transition(token, "parked", "resuming")
            assert await parked.transition(token, "resuming", state)
        elif state == "expired":
            assert await parked.transition(token, "parked", "expiring")
            assert await parked.transition(token, "expiring", state)
        elif state != "parked":
            assert await parked.transition(token, "parked", state)
    async with engine.begin() as conn:  # everything but ct_recent last changed two hours ago
        await conn.execute(
            update(ParkedCallRow).where(ParkedCallRow.token != "ct_recent").values(updated_at=past)
        )
    assert await parked.purge_finished(retention_s=3600, batch=2) == 3
    left = {token for token in STATES if await parked.get(token) is not None}
    assert left == {"ct_parked", "ct_resuming", "ct_expiring", "ct_recent"}
    assert await parked.purge_finished(retention_s=3600) == 0


async def test_a_live_call_resumes_once_and_an_expired_one_not_at_all(engine: AsyncEngine) -> None:
    parked = ParkedCallStore(engine)
    await parked.create(_record("ct_live", datetime.now(UTC) + timedelta(minutes=5)))
    await parked.create(_record("ct_late", datetime.now(UTC) - timedelta(seconds=1)))
    assert await parked.transition("ct_live", "parked", "resuming", live_only=True)
    assert not await parked.transition("ct_live", "parked", "resuming", live_only=True)
    assert not await parked.transition("ct_late", "parked", "resuming", live_only=True)
    assert [record.token for record in await parked.due()] == ["ct_late"]
