"""Tool co-occurrence learned by the router: one row per tool and one per ordered pair of tools.

Replicas never write totals, only add their unsaved counts: `uses = uses + excluded.uses` in one
upsert, which is the same SQL on SQLite and PostgreSQL, so replicas saving at the same moment both
count. Rows are written in key order, so two PostgreSQL transactions lock shared rows in the same
order and cannot deadlock.
"""

from __future__ import annotations

from sqlalchemy import Text, cast, null, select, text, union_all
from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.routing.learning import CoOccurrenceCounts
from colonnade.store.tables import ToolPairRow, ToolUseRow
from colonnade.store.write_gate import WriteGate

__all__ = ["CoOccurrenceStore"]

# A tool's uses come with no partner; a pair's count with both tools.
_LOAD = union_all(
    select(ToolUseRow.tool, cast(null(), Text), ToolUseRow.uses),
    select(ToolPairRow.given, ToolPairRow.other, ToolPairRow.together),
)
_ADD_USES = text(
    "INSERT INTO tool_uses (tool, uses) VALUES (:tool, :uses)"
    " ON CONFLICT (tool) DO UPDATE SET uses = tool_uses.uses + excluded.uses"
)
_ADD_PAIRS = text(
    "INSERT INTO tool_pairs (given, other, together) VALUES (:given, :other, :together)"
    " ON CONFLICT (given, other) DO UPDATE SET together = tool_pairs.together + excluded.together"
)


class CoOccurrenceStore:
    """The router's `CoOccurrenceRepository` on the gateway's database."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self._write = WriteGate(engine)

    async def load(self) -> CoOccurrenceCounts:
        """The totals every replica has added so far, read in one statement (one consistent snapshot)."""
        uses: dict[str, int] = {}
        pairs: dict[tuple[str, str], int] = {}
        async with self._engine.connect() as conn:
            for given, other, count in await conn.execute(_LOAD):
                if other is None:
                    uses[given] = int(count)
                else:
                    pairs[(given, other)] = int(count)
        return CoOccurrenceCounts(uses, pairs)

    async def add(self, delta: CoOccurrenceCounts) -> None:
        """Add `delta` to the saved counts in one transaction (all of it or, on error, none)."""
        uses = [{"tool": tool, "uses": count} for tool, count in sorted(delta.uses.items()) if count]
        pairs = [
            {"given": given, "other": other, "together": count}
            for (given, other), count in sorted(delta.pairs.items())
            if count
        ]
        if not uses and not pairs:
            return
        async with self._write(), self._engine.begin() as conn:
            if uses:
                await conn.execute(_ADD_USES, uses)
            if pairs:
                await conn.execute(_ADD_PAIRS, pairs)
