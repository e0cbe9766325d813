"""Parked calls: a stage suspends a call and a later request resumes it, once, before it expires.

Two-phase commit parks a prepared call until its commit (reason `prepared`); an approval workflow
parks a call until a human decides (`awaiting_approval`); elicitation parks a call until the
user answers (`awaiting_input`). Each reason registers one `ParkingHandler`; this module owns
what they share: the single-use token, the expiry, the one resume path (the handler first admits
or refuses the principal resuming, then a compare-and-set from parked to resuming, so concurrent
resumes run the handler once and a refused one consumes nothing), the owner's discard, and the
one sweep that expires what nobody resumed in time.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import secrets
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any, Protocol

from colonnade.calls.call import Call
from colonnade.calls.envelope import CallResult, CallStatus
from colonnade.governance.principal import Principal
from colonnade.store.parked_calls_repo import ParkedCallStore, ParkedRecord

__all__ = [
    "MAX_EXPIRY_ATTEMPTS",
    "ParkReason",
    "ParkedCalls",
    "ParkingHandler",
    "argument_hash",
]

logger = logging.getLogger(__name__)
MAX_EXPIRY_ATTEMPTS = 5


class ParkReason(StrEnum):
    PREPARED = "prepared"
    AWAITING_APPROVAL = "awaiting_approval"
    AWAITING_INPUT = "awaiting_input"


def argument_hash(arguments: Mapping[str, Any]) -> str:
    """SHA-256 of the canonical JSON of a call's arguments: what a parked call is bound to."""
    canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class ParkingHandler(Protocol):
    """What one reason does when its parked call is resumed, refused, or expires."""

    async def admit(
        self, parked: ParkedRecord, principal: Principal, call_id: str | None, doing: str
    ) -> CallResult | None:
        """None when `principal` may `doing` (resume, discard) this parked call now; else the refusal."""
        ...

    async def resume(
        self, parked: ParkedRecord, *, call_id: str | None, principal: Principal
    ) -> CallResult: ...

    def refused(self, parked: ParkedRecord | None, token: str, why: str, call_id: str | None) -> CallResult:
        """The answer to a resume that cannot happen (`why`: unknown, expired, resumed, ...)."""
        ...

    async def expire(self, parked: ParkedRecord) -> bool:
        """Undo or close what the parked call holds; False to try again at the next sweep."""
        ...


class ParkedCalls:
    def __init__(self, store: ParkedCallStore) -> None:
        self.store = store
        self._handlers: dict[str, ParkingHandler] = {}

    def register(self, reason: ParkReason, handler: ParkingHandler) -> None:
        self._handlers[reason.value] = handler

    async def park(self, call: Call, reason: ParkReason, *, payload: Any, window_ms: float) -> ParkedRecord:
        """Suspend the call; the token (prefixed by reason) is the only way to resume it."""
        prefix = {ParkReason.PREPARED: "ct_", ParkReason.AWAITING_APPROVAL: "ap_"}.get(reason, "pk_")
        record = ParkedRecord(
            token=prefix + secrets.token_urlsafe(24),
            reason=reason.value,
            tool=call.tool.canonical_name,
            version=call.tool.version,
            principal=call.principal.key,
            input=dict(call.request.input),
            input_hash=argument_hash(call.request.input),
            payload=payload,
            state="parked",
            deadline=datetime.now(UTC) + timedelta(milliseconds=window_ms),
            attempts=0,
            call_id=call.request.call_id,
            tenant=call.principal.tenant,
        )
        await self.store.create(record)
        return record

    async def resume(
        self, token: str, reason: ParkReason, *, call_id: str | None, principal: Principal
    ) -> CallResult:
        """Run the reason's handler once for a live parked call; anything else is refused."""
        handler = self._handlers[reason.value]
        record = await self.store.get(token)
        if record is None or record.reason != reason.value:
            return handler.refused(None, token, "unknown", call_id)
        refusal = await handler.admit(record, principal, call_id, "resume")
        if refusal is not None:  # checked before the token is taken: a refusal leaves it to its owner
            return refusal
        if not await self.store.transition(token, "parked", "resuming", live_only=True):
            current = await self.store.get(token) or record
            expired = current.state == "parked" and current.deadline <= datetime.now(UTC)
            return handler.refused(current, token, "expired" if expired else current.state, call_id)
        result = await handler.resume(record, call_id=call_id, principal=principal)
        if result.status is CallStatus.SUCCESS:
            await self.store.transition(token, "resuming", "resumed")
        else:  # still parked: it may be resumed again until it expires
            await self.store.transition(token, "resuming", "parked")
        return result

    async def discard(
        self, token: str, reason: ParkReason, *, call_id: str | None, principal: Principal
    ) -> ParkedRecord | CallResult:
        """Take a live parked call for expiry now, at its owner's request: the record to undo, or the refusal.

        The caller undoes what the call holds and then calls `expired`; if undoing fails, the call
        stays `expiring` and the sweep tries again once its deadline has passed.
        """
        handler = self._handlers[reason.value]
        record = await self.store.get(token)
        if record is None or record.reason != reason.value:
            return handler.refused(None, token, "unknown", call_id)
        refusal = await handler.admit(record, principal, call_id, "discard")
        if refusal is not None:
            return refusal
        if not await self.store.transition(token, "parked", "expiring", live_only=True):
            current = await self.store.get(token) or record
            expired = current.state == "parked" and current.deadline <= datetime.now(UTC)
            return handler.refused(current, token, "expired" if expired else current.state, call_id)
        return record

    async def expired(self, token: str) -> None:
        """A discarded call's hold is undone: it is over."""
        await self.store.transition(token, "expiring", "expired")

    async def sweep(self) -> int:
        """Expire every parked call past its deadline; returns how many expired now."""
        expired = 0
        for record in await self.store.due():
            handler = self._handlers.get(record.reason)
            if handler is None:
                continue  # another replica's reason; it sweeps its own
            if record.state == "parked" and not await self.store.transition(
                record.token, "parked", "expiring"
            ):
                continue  # resumed or taken by another sweeper in the meantime
            if await handler.expire(record):
                await self.store.transition(record.token, "expiring", "expired")
                expired += 1
            elif record.attempts >= MAX_EXPIRY_ATTEMPTS:
                await self.store.transition(record.token, "expiring", "failed")
                logger.error("expiring parked call %s (%s) failed for good", record.token, record.reason)
        return expired

    async def run(self, interval_s: float = 1.0) -> None:
        """Sweep until cancelled (finished calls are purged with the other expired records)."""
        while True:
            try:
                await self.sweep()
            except Exception:  # the store may be briefly unavailable; the next tick retries
                logger.exception("sweeping parked calls failed")
            await asyncio.sleep(interval_s)
