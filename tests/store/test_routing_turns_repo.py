"""Routing turns over SQLite and PostgreSQL: a turn is written when it opens and rewritten as its
calls come, read back newest first by tenant and consumer, and dropped past its retention."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.observability.routing_turns import TURN_RETENTION, RoutingTurns, TurnsFlusher
from colonnade.store.routing_turns_repo import RoutingTurnStore


def listed(turns: RoutingTurns, session: str, who: str, tenant: str) -> None:
    shown = ("acme:billing:get_invoice", "acme:billing:refund_invoice")
    turns.listed(
        session, consumer=who, tenant=tenant, query="refund", shown=shown, confidence=0.8, fallback=False
    )


async def test_turns_are_written_rewritten_read_back_and_purged(engine: AsyncEngine) -> None:
    turns, store = RoutingTurns(), RoutingTurnStore(engine)
    flusher = TurnsFlusher(turns, store)
    listed(turns, "s-1", "user:erin", "acme")
    listed(turns, "s-2", "user:frank", "globex")
    assert await flusher.flush() == 2
    turns.called("s-1", "acme:billing:refund_invoice", ok=True)
    turns.called("s-1", "acme:crm:get_customer", ok=False)
    assert await flusher.flush() == 1  # only the turn that changed

    (erin,) = await RoutingTurnStore(engine).recent(tenant="acme", consumer="user:erin")
    assert [(c.tool, c.outcome) for c in erin.calls] == [
        ("acme:billing:refund_invoice", "success"),
        ("acme:crm:get_customer", "error"),
    ]
    assert erin.called_shown == 1 and erin.shown[0] == "acme:billing:get_invoice"
    assert [t.consumer for t in await store.recent()] == ["user:frank", "user:erin"]  # newest first
    assert await store.recent(tenant="acme", consumer="user:frank") == []

    old = replace(erin, id="0" * 32, at=datetime.now(UTC) - TURN_RETENTION - timedelta(hours=1))
    await store.save([old])
    assert len(await store.recent()) == 3
    assert await flusher.purge() == 1
    assert {t.id for t in await store.recent()} == {erin.id, (await store.recent(tenant="globex"))[0].id}
