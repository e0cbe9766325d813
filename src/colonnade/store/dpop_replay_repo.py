"""DPoP proofs already used, shared by every replica: a proof accepted once is refused after.

A proof is remembered until it could no longer pass the freshness window; `first_use` is one
INSERT that reports whether the row was new, so two replicas seeing the same proof at the same
time cannot both accept it.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import delete
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.store.tables import DpopProofRow
from colonnade.store.write_gate import WriteGate

__all__ = ["DpopReplayStore"]


class DpopReplayStore:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self._write = WriteGate(engine)
        self._insert = pg_insert if engine.dialect.name == "postgresql" else sqlite_insert

    async def first_use(self, proof: str, expires_at: datetime) -> bool:
        """Remember the proof; True when it had not been seen before."""
        statement = (
            self._insert(DpopProofRow)
            .values(proof=proof, expires_at=expires_at)
            .on_conflict_do_nothing(index_elements=["proof"])
        )
        async with self._write(), self._engine.begin() as conn:
            return bool((await conn.execute(statement)).rowcount)

    async def purge_expired(self) -> int:
        async with self._write(), self._engine.begin() as conn:
            stale = delete(DpopProofRow).where(DpopProofRow.expires_at <= datetime.now(UTC))
            result = await conn.execute(stale)
            return int(result.rowcount or 0)
