"""Walk the audit chain from its first record and report the first broken link, if any.

A record is broken when its number is not the one after its predecessor's (a gap, or an insert),
when its `prev_hash` is not its predecessor's hash (a removal or a reordering), or when its own
hash does not match its fields (a change).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from colonnade.governance.audit.chain import GENESIS, record_hash
from colonnade.store.audit_repo import AuditStore, StoredAudit

__all__ = ["ChainBreak", "ChainReport", "verify_chain"]

_BATCH = 500


@dataclass(frozen=True, slots=True)
class ChainBreak:
    seq: int
    problem: str


@dataclass(frozen=True, slots=True)
class ChainReport:
    records: int
    head_seq: int
    head_hash: str
    broken: ChainBreak | None

    @property
    def ok(self) -> bool:
        return self.broken is None


async def verify_chain(store: AuditStore) -> ChainReport:
    """Each batch is hashed in a worker thread: a gateway verifying a large log (the audit page)
    keeps answering calls meanwhile."""
    position = _Position(1, GENESIS, 0)
    while True:
        batch = await store.scan(position.expected_seq - 1, _BATCH)
        if not batch:
            return position.report(None)
        position, broken = await asyncio.to_thread(_check, batch, position)
        if broken is not None:
            return position.report(broken)


@dataclass(frozen=True, slots=True)
class _Position:
    """How far the walk got: the next number expected, the hash it must link to, records intact."""

    expected_seq: int
    previous: str
    checked: int

    def report(self, broken: ChainBreak | None) -> ChainReport:
        return ChainReport(self.checked, self.expected_seq - 1, self.previous, broken)


def _check(batch: Sequence[StoredAudit], start: _Position) -> tuple[_Position, ChainBreak | None]:
    """Walk one batch from `start`: where the walk ends, and the first broken link if any."""
    expected_seq, previous, checked = start.expected_seq, start.previous, start.checked
    broken: ChainBreak | None = None
    for record in batch:
        if record.seq != expected_seq:
            problem = f"record {expected_seq} is missing (the next one is {record.seq})"
            broken = ChainBreak(expected_seq, problem)
        elif record.prev_hash != previous:
            broken = ChainBreak(record.seq, "its prev_hash is not the hash of the record before it")
        elif record_hash(record.fields()) != record.hash:
            broken = ChainBreak(record.seq, "its fields do not match its hash (the record was changed)")
        if broken is not None:
            break
        checked, expected_seq, previous = checked + 1, expected_seq + 1, record.hash
    return _Position(expected_seq, previous, checked), broken
