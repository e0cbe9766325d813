"""The audit log: events become durable, chained rows before anyone is answered.

`append` returns once the event's row is committed (or raises `AuditUnavailable`), so the call
stage can hold a call's answer until its record is safe and fail it closed otherwise. Appends
are group-committed: every event that arrives while a batch is being written goes into the next
batch, one transaction for all of them, so a busy gateway pays one commit per batch rather than
per call. On the embedded SQLite file, whose write runs at once in the caller's thread, a caller
that finds the log idle leads the batch itself: it lets the callers that are ready join it, then
writes them with its own record, without handing anything to a task (the cheapest path for one
caller at a time); on PostgreSQL the store's group commit batches appends itself, together with
the idempotency writes of the same moment, so each append goes straight to it; elsewhere a flusher
task writes, so a caller that goes away cannot interrupt a batch. While the last batch failed,
`writable` is False and the call stage refuses new calls before they run; the next successful
batch (refusals are audited too) clears it.

Nothing sensitive is stored in clear: arguments only as a keyed hash, actors that look like
personal data (an e-mail as a subject) as a keyed pseudonym, and every other string scrubbed of
anything that looks like a credential.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import logging
from typing import Any

from colonnade.governance.audit.chain import seal
from colonnade.governance.audit.events import AuditEvent
from colonnade.observability.redaction import canonical_json, scrub
from colonnade.store.audit_repo import AuditStore

__all__ = ["AuditLog", "AuditUnavailable"]

logger = logging.getLogger(__name__)
_MAX_BATCH = 512
_Waiting = tuple[dict[str, Any], "asyncio.Future[None]"]
"""A queued row and the future its caller awaits."""
_MAX_TEXT = 256
_MAX_ACTORS = 1024
"""Principal keys whose stored form is remembered (a few per gateway; the cache restarts when full)."""


class AuditUnavailable(Exception):
    """The audit log could not make an event durable."""


class AuditLog:
    def __init__(self, store: AuditStore, key: bytes) -> None:
        if len(key) < 16:
            raise ValueError("the audit hash key must have at least 16 bytes")
        self.store = store
        # The keyed hash's state after the key, copied per hash: OpenSSL sets up HMAC-SHA256 once.
        self._keyed = hmac.new(key, digestmod=hashlib.sha256)
        self._actors: dict[str, str] = {}
        self._pending: list[_Waiting] = []
        self._flusher: asyncio.Task[None] | None = None
        self._writing = False
        self.writable = True

    async def append(self, event: AuditEvent) -> None:
        """Return once the event is committed; raise `AuditUnavailable` when it could not be."""
        row = self.row(event)
        if self.store.grouped:  # batched with every other durable write by the store
            await self._write([row])
            return
        if self._writing or not self.store.inline:
            future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._pending.append((row, future))
            if not self._writing:
                self._start_flusher()
            # Shielded: a caller that goes away does not take its record out of the batch.
            await asyncio.shield(future)
            return
        self._writing = True
        try:
            try:
                await asyncio.sleep(0)  # callers that are ready now join this batch
            except asyncio.CancelledError:  # the caller went away: its record is still written
                self._pending.insert(0, (row, _unwatched()))
                raise
            batch, self._pending = self._pending[: _MAX_BATCH - 1], self._pending[_MAX_BATCH - 1 :]
            await self._settle(batch, [row, *(queued for queued, _ in batch)])
        finally:
            if self._pending:  # callers that arrived meanwhile: the next batch
                self._start_flusher()
            else:
                self._writing = False

    def submit(self, event: AuditEvent) -> None:
        """Append without waiting (for events of a call that is being cancelled)."""
        task = asyncio.get_running_loop().create_task(self.append(event))
        task.add_done_callback(_consume)

    def args_hash(self, value: Any) -> str:
        """A keyed hash of a call's arguments: equal arguments, equal hashes; values stay unknown."""
        return self._hmac(canonical_json(value))

    def pseudonym(self, value: str) -> str:
        """A stable stand-in for personal data (e.g. an e-mail address as a subject)."""
        return f"pseudonym:{self._hmac(value)[:24]}"

    def _hmac(self, text: str) -> str:
        keyed = self._keyed.copy()
        keyed.update(text.encode("utf-8", "surrogatepass"))
        return keyed.hexdigest()

    def row(self, event: AuditEvent) -> dict[str, Any]:
        """The stored form of an event (without seq and hashes, which the chain adds)."""
        return {
            "at": event.at,
            "kind": event.kind.value,
            "actor": self.stored_actor(event.actor),
            "actor_kind": event.actor_kind,
            "tenant": _text(event.tenant),
            "tool": _text(event.tool),
            "args_hash": event.args_hash,
            "decision": event.decision,
            "reasons": [_text(reason) or "" for reason in event.reasons],
            "outcome": event.outcome,
            "code": event.code,
            "trace_id": _text(event.trace_id),
            "call_id": _text(event.call_id),
            "details": self._details(event),
        }

    def _details(self, event: AuditEvent) -> Any:
        details = _plain(scrub(dict(event.details)))
        if event.actor_chain:
            details["actor_chain"] = [self.stored_actor(key) for key in event.actor_chain]
        return details

    async def aclose(self) -> None:
        """Write what is pending."""
        while self._flusher is not None and not self._flusher.done():
            await asyncio.wait({self._flusher})
        await self.store.drain()

    def stored_actor(self, actor: str | None) -> str | None:
        """A principal key as records store it (a pseudonym when it looks like personal data)."""
        if actor is None:
            return None
        stored = self._actors.get(actor)
        if stored is None:
            if len(self._actors) >= _MAX_ACTORS:
                self._actors.clear()
            stored = self._actors[actor] = self._stored_actor(actor)
        return stored

    def _stored_actor(self, actor: str) -> str:
        cleaned = actor.replace("\x00", "")
        if scrub(cleaned) != cleaned or len(cleaned) > _MAX_TEXT:
            kind, _, _ = cleaned.partition(":")
            return f"{kind}:{self.pseudonym(cleaned)}" if kind.isalpha() else self.pseudonym(cleaned)
        return cleaned

    def _start_flusher(self) -> None:
        self._writing = True
        self._flusher = asyncio.get_running_loop().create_task(self._flush())

    async def _flush(self) -> None:
        try:
            while self._pending:
                batch, self._pending = self._pending[:_MAX_BATCH], self._pending[_MAX_BATCH:]
                with contextlib.suppress(AuditUnavailable):  # told to each caller of the batch
                    await self._settle(batch, [row for row, _ in batch])
        finally:
            self._writing = False  # no await since the queue was last seen empty

    async def _settle(self, waiting: list[_Waiting], rows: list[dict[str, Any]]) -> None:
        """Write `rows`, then tell the waiting callers how it went (raising the failure too)."""
        try:
            await self._write(rows)
        except AuditUnavailable as exc:
            for _, future in waiting:
                if not future.done():
                    future.set_exception(AuditUnavailable(str(exc)))
            raise
        for _, future in waiting:
            if not future.done():
                future.set_result(None)

    async def _write(self, rows: list[dict[str, Any]]) -> None:
        try:
            await self.store.append(rows, seal)
        except Exception as exc:
            self.writable = False
            logger.error("the audit log cannot be written: %s: %s", type(exc).__name__, str(exc)[:300])
            raise AuditUnavailable(type(exc).__name__) from None
        self.writable = True


def _text(value: str | None) -> str | None:
    """A caller-chosen string as it may be stored: scrubbed, without NUL (PostgreSQL refuses it), clipped."""
    if value is None:
        return None
    cleaned = scrub(value.replace("\x00", ""))
    assert isinstance(cleaned, str)
    return cleaned if len(cleaned) <= _MAX_TEXT else cleaned[:_MAX_TEXT] + "…"


def _plain(value: Any) -> Any:
    """JSON both databases store alike: strings without NUL, integers, no floats that could drift."""
    if isinstance(value, str):
        return value.replace("\x00", "")
    if isinstance(value, dict):
        return {str(k).replace("\x00", ""): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if isinstance(value, float):
        return repr(value)
    return value


def _unwatched() -> asyncio.Future[None]:
    """A future nobody awaits (its caller is gone); its outcome is read so it is not reported."""
    future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    future.add_done_callback(lambda done: done.cancelled() or done.exception())
    return future


def _consume(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        logger.error("an audit record of a cancelled call was not written")
