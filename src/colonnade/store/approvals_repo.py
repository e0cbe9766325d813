"""Approvals in the database: asked once, decided at most once, their token used at most once.

Every decision is a compare-and-set on the state (`pending` -> `approved`/`denied`, `approved` ->
`used`), so two approvers acting at once, or two calls presenting the same token, have one winner
even across replicas. Finished approvals are purged after a retention period (the audit log
keeps who asked and who decided); pending ones never are.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from sqlalchemy import delete, or_, select, update
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from colonnade.store.engine import session_factory
from colonnade.store.tables import ApprovalRow
from colonnade.store.write_gate import WriteGate

__all__ = ["ApprovalRecord", "ApprovalState", "ApprovalStore"]

ApprovalState = Literal["pending", "approved", "denied", "used", "expired"]
_FINISHED = ("denied", "used", "expired")


@dataclass(frozen=True, slots=True)
class ApprovalRecord:
    id: str
    tenant: str
    tool: str
    version: str
    requester: str
    requester_principal: dict[str, Any]
    input: dict[str, Any]
    input_hash: str
    reasons: tuple[str, ...]
    policy_version: str | None
    state: str
    expires_at: datetime
    created_at: datetime
    updated_at: datetime
    confirmed_by: str | None = None
    approver: str | None = None
    comment: str | None = None
    decided_at: datetime | None = None
    token: str | None = None
    token_expires_at: datetime | None = None


def _now() -> datetime:
    return datetime.now(UTC)


def _aware(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _record(row: ApprovalRow) -> ApprovalRecord:
    return ApprovalRecord(
        id=row.id,
        tenant=row.tenant,
        tool=row.tool,
        version=row.version,
        requester=row.requester,
        requester_principal=dict(row.requester_principal),
        input=dict(row.input),
        input_hash=row.input_hash,
        reasons=tuple(row.reasons or ()),
        policy_version=row.policy_version,
        state=row.state,
        expires_at=_aware(row.expires_at) or _now(),
        created_at=_aware(row.created_at) or _now(),
        updated_at=_aware(row.updated_at) or _now(),
        confirmed_by=row.confirmed_by,
        approver=row.approver,
        comment=row.comment,
        decided_at=_aware(row.decided_at),
        token=row.token,
        token_expires_at=_aware(row.token_expires_at),
    )


class ApprovalStore:
    def __init__(self, bind: AsyncEngine | async_sessionmaker[AsyncSession]) -> None:
        self._sessions = session_factory(bind) if isinstance(bind, AsyncEngine) else bind
        self._write = WriteGate(bind if isinstance(bind, AsyncEngine) else None)

    async def create(self, record: ApprovalRecord) -> None:
        async with self._write(), self._sessions.begin() as session:
            session.add(
                ApprovalRow(
                    id=record.id,
                    tenant=record.tenant,
                    tool=record.tool,
                    version=record.version,
                    requester=record.requester,
                    requester_principal=record.requester_principal,
                    input=record.input,
                    input_hash=record.input_hash,
                    reasons=list(record.reasons),
                    policy_version=record.policy_version,
                    state=record.state,
                    expires_at=record.expires_at,
                    created_at=record.created_at,
                    updated_at=record.updated_at,
                )
            )

    async def get(self, approval_id: str) -> ApprovalRecord | None:
        async with self._sessions() as session:
            row = await session.get(ApprovalRow, approval_id)
            return _record(row) if row is not None else None

    async def list(
        self, *, tenant: str | None = None, state: str | None = None, limit: int = 200
    ) -> list[ApprovalRecord]:
        """Newest first; `tenant` None lists every tenant's."""
        query = select(ApprovalRow).order_by(ApprovalRow.created_at.desc()).limit(limit)
        if tenant is not None:
            query = query.where(ApprovalRow.tenant == tenant)
        if state is not None:
            query = query.where(ApprovalRow.state == state)
        async with self._sessions() as session:
            return [_record(row) for row in await session.scalars(query)]

    async def transition(
        self,
        approval_id: str,
        source: ApprovalState,
        target: ApprovalState,
        *,
        now: datetime | None = None,
        **changes: Any,
    ) -> bool:
        """Move `source` -> `target` with `changes`, atomically; False when it was not in `source`.

        Leaving `pending` for a decision also needs the request not to have expired (at `now`).
        """
        query = update(ApprovalRow).where(ApprovalRow.id == approval_id, ApprovalRow.state == source)
        now = now or _now()
        if source == "pending" and target != "expired":
            query = query.where(ApprovalRow.expires_at > now)
        async with self._write(), self._sessions.begin() as session:
            result = await session.execute(query.values(state=target, updated_at=now, **changes))
        return bool(getattr(result, "rowcount", 0))

    async def confirm(self, approval_id: str, by: str) -> bool:
        """Record the requester's own confirmation (it does not decide anything)."""
        query = (
            update(ApprovalRow)
            .where(ApprovalRow.id == approval_id, ApprovalRow.state == "pending")
            .values(confirmed_by=by, updated_at=_now())
        )
        async with self._write(), self._sessions.begin() as session:
            result = await session.execute(query)
        return bool(getattr(result, "rowcount", 0))

    async def purge_finished(
        self, *, retention_s: float, now: datetime | None = None, batch: int = 1_000
    ) -> int:
        """Delete approvals finished over `retention_s` before `now`, `batch` per transaction.

        Finished: denied, used or expired, last changed before the cutoff; or approved with a token
        that expired before it (no call can run on it any more). Pending approvals are never purged.
        """
        cutoff = (now or _now()) - timedelta(seconds=retention_s)
        finished = or_(
            ApprovalRow.state.in_(_FINISHED) & (ApprovalRow.updated_at <= cutoff),
            (ApprovalRow.state == "approved") & (ApprovalRow.token_expires_at <= cutoff),
        )
        purged = 0
        while True:
            stale = select(ApprovalRow.id).where(finished).limit(batch)
            async with self._write(), self._sessions.begin() as session:
                purge = delete(ApprovalRow).where(ApprovalRow.id.in_(stale))
                result = await session.execute(purge.execution_options(synchronize_session=False))
            deleted = int(getattr(result, "rowcount", 0) or 0)
            purged += deleted
            if deleted < batch:
                return purged
