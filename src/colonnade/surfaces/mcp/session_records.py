"""Handshake-era MCP sessions that any replica can serve: each session's negotiated state, shared.

A handshake-era client (2025-11-25 and older) sends `initialize` once and then names its session
(`Mcp-Session-Id`) on every request; behind a round-robin balancer the next request lands on
another replica. The SDK keeps a session only in the memory of the replica that opened it, so
that replica alone could answer it.

Three ways were weighed (issue 34): forwarding each request to the owner replica (an extra HTTP
hop of the whole request and its stream on every request that lands elsewhere, two of three
with three replicas, and a takeover path when the owner dies anyway), a signed session id that
carries the state (the id is fixed at `initialize`, so what a session negotiates later, its log
level and subscriptions, cannot ride in it; and a stolen id could not be ended), and what this
module does: the session's negotiated state (protocol version, the client's `initialize` params,
the principal and credential it is bound to, its log level and resource subscriptions) is one
small record in `SharedValues`, written before the `initialize` answer leaves, and a replica that
meets a session id it does not hold rebuilds an initialized session from it, with no new
`initialize` (`BoundedSessionManager._restore`). The SDK's public `Connection` and
`serve_connection` build such a session; nothing private is added. Measured
(`bench/session_replicas.py --sessions 40 --rounds 5`, busy machine): the first request of a
session on a replica costs about 1.3 ms more CPU (the Redis read and the session's server task,
which `initialize` builds too: a client made to initialize again would cost 3.4 ms and two round
trips), later requests nothing measurable (a renewal at most every quarter of the idle timeout,
off the request's path); forwarding to the owner would cost at least 1.0 ms of CPU on every
request that lands elsewhere, two in three behind three replicas.

The record lives as long as the session is used somewhere: its expiry is the idle timeout, and
every replica serving the session renews it (`touch`). A log level set through one replica reaches
the others holding the session over the change fan-out. A session the client ends (DELETE) is ended
everywhere: its record is deleted before the answer and the other replicas are told over the
change fan-out to close their copy. A replica that evicts a session for room (`SessionLedger`)
drops only its own copy: the bound is on this replica's memory, and the session may be in use on
another. A replica that stops (or dies) ends nothing: its sessions go on at the survivors.

Redis away (degraded mode): a session opened then is kept on its replica only, as without Redis,
and counted (`local_only`); a request naming a session this replica does not hold gets the
spec's 404, so the client initializes again. Renewals write such records once Redis answers.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson
from mcp_types import InitializeRequestParams
from pydantic import ValidationError

from colonnade.shared_state import Change, Fanout, SharedStateUnavailable, SharedValues

__all__ = ["CHANGED_TOPIC", "ENDED_TOPIC", "SessionRecord", "SessionRecords"]

logger = logging.getLogger(__name__)
ENDED_TOPIC = "mcp-session-ended"
CHANGED_TOPIC = "mcp-session-changed"
"""The fan-out topic on which a replica says a session's record changed (its log level): reread it."""
"""The fan-out topic on which a replica says a session ended (its DELETE): close your copy."""
_KEY = "mcp-session:{endpoint}:{session_id}"
_RETRY_UNSHARED_S = 1.0


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """What a replica needs to serve a session it did not open, and whom the session answers."""

    session_id: str
    endpoint: str
    """Which session manager holds it: `mcp`, or `servers/<name>` for a server's own endpoint."""
    principal: str
    """The principal that opened it: a request of anyone else is answered as an unknown session."""
    owner: str
    """Whose session it is in the ledger (`caller_key`)."""
    protocol_version: str
    client: dict[str, Any]
    """The client's `initialize` params as it sent them (capabilities, clientInfo)."""
    requestor: dict[str, Any] | None = None
    """The SDK's identity of the credential that opened it (`AuthorizationContext`), if any."""
    log_level: str | None = None
    subscriptions: tuple[str, ...] = ()
    opened_by: str = ""
    """The replica that opened it (for logs and status)."""

    def encode(self) -> bytes:
        return orjson.dumps(dataclasses.asdict(self))

    @classmethod
    def decode(cls, data: bytes) -> SessionRecord | None:
        """The record, or None (logged) when the stored bytes are not one."""
        try:
            raw = orjson.loads(data)
            record = cls(
                session_id=str(raw["session_id"]),
                endpoint=str(raw["endpoint"]),
                principal=str(raw["principal"]),
                owner=str(raw["owner"]),
                protocol_version=str(raw["protocol_version"]),
                client=dict(raw["client"]),
                requestor=dict(raw["requestor"]) if raw.get("requestor") is not None else None,
                log_level=str(raw["log_level"]) if raw.get("log_level") is not None else None,
                subscriptions=tuple(str(uri) for uri in raw.get("subscriptions") or ()),
                opened_by=str(raw.get("opened_by") or ""),
            )
            record.client_params()
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, ValidationError) as exc:
            logger.warning("ignored a malformed MCP session record (%s): %.200r", type(exc).__name__, data)
            return None
        return record

    def client_params(self) -> InitializeRequestParams:
        """The `initialize` params the session was opened with, as the SDK's connection keeps them."""
        return InitializeRequestParams.model_validate(self.client, by_name=False)

    def evolve(self, **changes: Any) -> SessionRecord:
        return dataclasses.replace(self, **changes)


@dataclass(slots=True)
class _Known:
    record: SessionRecord
    touched: float
    shared: bool


@dataclass(slots=True)
class _Counts:
    written: int = 0
    restored: int = 0
    missing: int = 0
    local_only: int = 0
    ended: int = 0
    write_failures: int = 0


EndedHandler = Callable[[str], None]
ChangedHandler = Callable[[SessionRecord], None]


class SessionRecords:
    """The shared records of every session manager of one gateway (`SessionLedger.records`)."""

    def __init__(
        self,
        values: SharedValues,
        fanout: Fanout | None = None,
        *,
        ttl_s: float,
        replica_id: str = "",
    ) -> None:
        """`ttl_s` is the sessions' idle timeout: a record nobody renews for that long is gone."""
        self.values = values
        self.fanout = fanout
        self.ttl_s = ttl_s
        self.touch_after_s = max(1.0, ttl_s / 4)
        self.replica_id = replica_id
        self._known: dict[tuple[str, str], _Known] = {}
        self._ended: dict[str, EndedHandler] = {}
        self._changed: dict[str, ChangedHandler] = {}
        self._background: set[asyncio.Task[None]] = set()
        self.counts = _Counts()
        if fanout is not None:
            fanout.subscribe(ENDED_TOPIC, self._on_ended_elsewhere)
            fanout.subscribe(CHANGED_TOPIC, self._on_changed_elsewhere)

    def on_ended(self, endpoint: str, handler: EndedHandler) -> None:
        """`handler(session_id)` closes this replica's copy of a session another replica ended."""
        self._ended[endpoint] = handler

    def on_changed(self, endpoint: str, handler: ChangedHandler) -> None:
        """`handler(record)` applies to this replica's copy what another replica changed in a session."""
        self._changed[endpoint] = handler

    def known(self, endpoint: str, session_id: str) -> SessionRecord | None:
        """The record of a session this replica holds (opened or restored here)."""
        known = self._known.get((endpoint, session_id))
        return known.record if known is not None else None

    async def put(self, record: SessionRecord) -> bool:
        """Write a session's record (before its `initialize` or change is answered); False when Redis
        is away: the session is then served by this replica only, until a renewal writes it."""
        key = (record.endpoint, record.session_id)
        shared = await self._write(record)
        new = key not in self._known
        self._known[key] = _Known(record, time.monotonic(), shared)
        if shared:
            self.counts.written += 1
        elif new:
            self.counts.local_only += 1
            logger.warning(
                "MCP session %s is served by this replica only: Redis is away (degraded mode)",
                record.session_id[:64],
            )
        return shared

    async def update(self, endpoint: str, session_id: str, *, tell: bool = False, **changes: Any) -> bool:
        """Change a held session's record (its log level, its subscriptions) and write it; with `tell`,
        the other replicas holding a copy reread it."""
        known = self._known.get((endpoint, session_id))
        if known is None:
            return False
        shared = await self.put(known.record.evolve(**changes))
        if shared and tell and self.fanout is not None:
            await self.fanout.publish(CHANGED_TOPIC, {"endpoint": endpoint, "session_id": session_id})
        return shared

    async def fetch(self, endpoint: str, session_id: str) -> SessionRecord | None:
        """The record of a session another replica opened, to serve it here; None when there is none
        (never opened, ended, expired) or Redis is away (the spec's 404 then: re-initialize)."""
        try:
            data = await self.values.get(_KEY.format(endpoint=endpoint, session_id=session_id))
        except SharedStateUnavailable:
            self.counts.missing += 1
            return None
        record = SessionRecord.decode(data) if data is not None else None
        if record is None or record.endpoint != endpoint or record.session_id != session_id:
            self.counts.missing += 1
            return None
        return record

    def restored(self, record: SessionRecord) -> None:
        """This replica now holds a session it fetched."""
        self._known[(record.endpoint, record.session_id)] = _Known(record, time.monotonic(), True)
        self.counts.restored += 1

    def touch(self, endpoint: str, session_id: str) -> None:
        """A request of a held session: renew its record now and then, off the request's path."""
        known = self._known.get((endpoint, session_id))
        if known is None:
            return
        now = time.monotonic()
        # A record Redis did not take (degraded mode) is offered again each second, not each request.
        if now - known.touched < (self.touch_after_s if known.shared else _RETRY_UNSHARED_S):
            return
        known.touched = now
        self._spawn(self._renew(known))

    def forget(self, endpoint: str, session_id: str) -> None:
        """This replica no longer holds the session (it ended here); its record stays for the others."""
        self._known.pop((endpoint, session_id), None)

    async def end(self, endpoint: str, session_id: str) -> None:
        """The session ended for good (its client's DELETE): its record goes, every copy is closed."""
        self._known.pop((endpoint, session_id), None)
        self.counts.ended += 1
        try:
            await self.values.delete(_KEY.format(endpoint=endpoint, session_id=session_id))
        except SharedStateUnavailable:
            logger.warning(
                "MCP session %s ended, but Redis is away: its record expires after %.0f s instead",
                session_id[:64],
                self.ttl_s,
            )
        if self.fanout is not None:
            await self.fanout.publish(ENDED_TOPIC, {"endpoint": endpoint, "session_id": session_id})

    def status(self) -> dict[str, Any]:
        """What `/v1/status` shows under `shared_state.mcp_sessions`."""
        counts = self.counts
        return {
            "held": len(self._known),
            "held_here_only": sum(1 for known in self._known.values() if not known.shared),
            "records_written": counts.written,
            "restored_here": counts.restored,
            "unknown_ids_refused": counts.missing,
            "opened_local_only": counts.local_only,
            "record_writes_failed": counts.write_failures,
            "ended": counts.ended,
        }

    async def _write(self, record: SessionRecord) -> bool:
        key = _KEY.format(endpoint=record.endpoint, session_id=record.session_id)
        try:
            await self.values.set(key, record.encode(), ttl_s=self.ttl_s)
        except SharedStateUnavailable:
            self.counts.write_failures += 1
            return False
        return True

    async def _renew(self, known: _Known) -> None:
        if (known.record.endpoint, known.record.session_id) not in self._known:
            return  # ended meanwhile: never write back a record that was deleted
        known.shared = await self._write(known.record)

    async def _on_ended_elsewhere(self, change: Change) -> None:
        payload: Mapping[str, Any] = change.payload
        endpoint, session_id = payload.get("endpoint"), payload.get("session_id")
        if not isinstance(endpoint, str) or not isinstance(session_id, str):
            return
        self._known.pop((endpoint, session_id), None)
        handler = self._ended.get(endpoint)
        if handler is not None:
            handler(session_id)

    async def _on_changed_elsewhere(self, change: Change) -> None:
        payload: Mapping[str, Any] = change.payload
        endpoint, session_id = payload.get("endpoint"), payload.get("session_id")
        if not isinstance(endpoint, str) or not isinstance(session_id, str):
            return
        known = self._known.get((endpoint, session_id))
        handler = self._changed.get(endpoint)
        if known is None or handler is None:
            return  # not held here: the next rebuild reads the new record
        record = await self.fetch(endpoint, session_id)
        if record is None or (endpoint, session_id) not in self._known:
            return
        known.record = record
        handler(record)

    def _spawn(self, work: Any) -> None:
        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
