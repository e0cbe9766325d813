"""The alerts table over SQLite and PostgreSQL: a round fires, keeps firing, resolves, fires again."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.store.alerts_repo import AlertRecord, AlertStore

T0 = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


def _firing(subject: str, value: float) -> AlertRecord:
    return AlertRecord(
        "tool_success_rate", subject, "acme", "firing", f"{subject} fails", value, 0.99, T0, None, T0
    )


async def test_a_round_fires_keeps_firing_resolves_and_fires_again(engine: AsyncEngine) -> None:
    store = AlertStore(engine)
    first = await store.reconcile([_firing("acme:a:x", 0.5), _firing("acme:a:y", 0.4)], T0)
    assert [(a.subject, a.state, a.fired_at) for a in first] == [
        ("acme:a:x", "firing", T0),
        ("acme:a:y", "firing", T0),
    ]
    later = T0 + timedelta(minutes=1)
    second = {a.subject: a for a in await store.reconcile([_firing("acme:a:x", 0.3)], later)}
    assert second["acme:a:x"].state == "firing" and second["acme:a:x"].fired_at == T0  # still the same firing
    assert second["acme:a:x"].value == 0.3 and second["acme:a:x"].updated_at == later
    assert second["acme:a:y"].state == "resolved" and second["acme:a:y"].resolved_at == later
    again = T0 + timedelta(minutes=2)
    third = {a.subject: a for a in await store.reconcile([_firing("acme:a:y", 0.2)], again)}
    assert third["acme:a:y"].state == "firing" and third["acme:a:y"].fired_at == again
    assert third["acme:a:y"].resolved_at is None
    assert third["acme:a:x"].state == "resolved"
    assert [a.subject for a in await store.list()] == ["acme:a:x", "acme:a:y"]
