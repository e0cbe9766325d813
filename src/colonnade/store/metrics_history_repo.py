"""The metrics history as stored: one row per replica and bucket, merged when read.

Each replica writes only its own rows (the replica is part of the key), so a round is a
read-add-write of rows nobody else touches: no lost update on SQLite or PostgreSQL, no dialect
specific upsert arithmetic on a JSON histogram. `series` adds the replicas' rows per bucket.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime

from sqlalchemy import and_, delete, or_, select, tuple_
from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.observability.metrics_history import HistoryPoint, RollupCell, RollupKey
from colonnade.store.engine import session_factory
from colonnade.store.moments import aware
from colonnade.store.tables import MetricsRollupRow
from colonnade.store.write_gate import WriteGate

__all__ = ["MetricsHistoryStore"]


class MetricsHistoryStore:
    def __init__(self, engine: AsyncEngine, replica: str) -> None:
        self._sessions = session_factory(engine)
        self._write = WriteGate(engine)
        self.replica = replica

    async def add(self, cells: dict[RollupKey, RollupCell]) -> None:
        """Add one round of this replica's counts to its rows (created on first use), atomically."""
        table = MetricsRollupRow
        keys = [(k.resolution_s, k.start, k.dimension, k.subject, self.replica) for k in cells]
        async with self._write(), self._sessions.begin() as session:
            found = await session.scalars(
                select(table).where(
                    tuple_(
                        table.resolution_s, table.start, table.dimension, table.subject, table.replica
                    ).in_(keys)
                )
            )
            rows = {RollupKey(r.resolution_s, aware(r.start), r.dimension, r.subject): r for r in found}
            for key, cell in cells.items():
                row = rows.get(key)
                if row is None:
                    session.add(
                        table(
                            resolution_s=key.resolution_s,
                            start=key.start,
                            dimension=key.dimension,
                            subject=key.subject,
                            replica=self.replica,
                            calls=cell.calls,
                            errors=cell.errors,
                            histogram=list(cell.histogram),
                        )
                    )
                    continue
                merged = RollupCell(row.calls, row.errors, list(row.histogram))
                merged.add(cell)
                row.calls, row.errors, row.histogram = merged.calls, merged.errors, merged.histogram

    async def series(
        self, resolution_s: int, dimension: str, since: datetime, subjects: set[str] | None = None
    ) -> dict[str, list[HistoryPoint]]:
        """Per subject, its buckets from `since` on (oldest first), all replicas added together."""
        table = MetricsRollupRow
        query = select(table).where(
            table.resolution_s == resolution_s, table.dimension == dimension, table.start >= since
        )
        if subjects is not None:
            query = query.where(table.subject.in_(sorted(subjects)))
        merged: dict[str, dict[datetime, RollupCell]] = defaultdict(dict)
        async with self._sessions() as session:
            for row in await session.scalars(query):
                start = aware(row.start)
                cell = merged[row.subject].get(start)
                if cell is None:
                    cell = merged[row.subject][start] = RollupCell()
                cell.add(RollupCell(row.calls, row.errors, list(row.histogram)))
        return {
            subject: [
                HistoryPoint(start, cell.calls, cell.errors, tuple(cell.histogram))
                for start, cell in sorted(buckets.items())
            ]
            for subject, buckets in sorted(merged.items())
        }

    async def purge_before(self, cutoffs: dict[int, datetime]) -> int:
        """Drop buckets older than their resolution's cutoff; returns how many rows went."""
        if not cutoffs:
            return 0
        table = MetricsRollupRow
        old = or_(*(and_(table.resolution_s == res, table.start < cut) for res, cut in cutoffs.items()))
        async with self._write(), self._sessions.begin() as session:
            done = await session.execute(delete(table).where(old))
        return int(getattr(done, "rowcount", 0) or 0)
