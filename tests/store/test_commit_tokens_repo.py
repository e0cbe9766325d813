"""Commit tokens are purged once finished and past retention; prepared or busy ones never are."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.store.commit_tokens_repo import CommitTokenStore, TokenState
from colonnade.store.tables import CommitTokenRow

STATES: dict[str, TokenState] = {
    "ct_committed": "committed",
    "ct_rolled_back": "rolled_back",
    "ct_failed": "failed",
    "ct_prepared": "prepared",
    "ct_committing": "committing",
    "ct_compensating": "compensating",
    "ct_recent": "committed",
}


async def test_finished_tokens_are_purged_after_retention_and_open_ones_never(engine: AsyncEngine) -> None:
    tokens = CommitTokenStore(engine)
    past = datetime.now(UTC) - timedelta(hours=2)
    for token, state in STATES.items():
        await tokens.create(
            token, tool="acme:shop:reserve", version="1.0.0", input={}, prepared=None, deadline=past
        )
        if state != "prepared":
            assert await tokens.transition(token, "prepared", state)
    async with engine.begin() as conn:  # everything but ct_recent last changed two hours ago
        await conn.execute(
            update(CommitTokenRow).where(CommitTokenRow.token != "ct_recent").values(updated_at=past)
        )
    assert await tokens.purge_finished(retention_s=3600, batch=2) == 3
    left = {token for token in STATES if await tokens.get(token) is not None}
    assert left == {"ct_prepared", "ct_committing", "ct_compensating", "ct_recent"}
    assert await tokens.purge_finished(retention_s=3600) == 0
