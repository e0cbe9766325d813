"""Walk the audit chain from its first record and report the first broken link, if any.

A record is broken when its number is not the one after its predecessor's (a gap, or an insert),
when its `prev_hash` is not its predecessor's hash (a removal or a reordering), or when its own
hash does not match its fields (a change).
"""

from __future__ import annotations

from dataclasses import dataclass

from colonnade.governance.audit.chain import GENESIS, record_hash
from colonnade.store.audit_repo import AuditStore

__all__ = ["ChainBreak", "ChainReport", "verify_chain"]

_BATCH = 2000


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
    expected_seq, previous, checked = 1, GENESIS, 0
    while True:
        batch = await store.scan(expected_seq - 1, _BATCH)
        if not batch:
            return ChainReport(checked, expected_seq - 1, previous, None)
        for record in batch:
            if record.seq != expected_seq:
                problem = f"record {expected_seq} is missing (the next one is {record.seq})"
                return ChainReport(checked, expected_seq - 1, previous, ChainBreak(expected_seq, problem))
            if record.prev_hash != previous:
                problem = "its prev_hash is not the hash of the record before it"
                return ChainReport(checked, expected_seq - 1, previous, ChainBreak(record.seq, problem))
            if record_hash(record.fields()) != record.hash:
                problem = "its fields do not match its hash (the record was changed)"
                return ChainReport(checked, expected_seq - 1, previous, ChainBreak(record.seq, problem))
            checked, expected_seq, previous = checked + 1, expected_seq + 1, record.hash
