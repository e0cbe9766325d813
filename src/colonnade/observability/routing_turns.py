"""Routing turns: what a routed session asked, which tools its listing showed, which it then called.

One turn per routed `tools/list` of a session; the session's calls until its next listing belong to
that turn. Recording is a dictionary update under a lock on the request path; the store gets the
turns that changed every few seconds from the flusher (as the metrics history does), so the
routing page, the precision and recall figures and `colonnade usage export` survive restarts.

Precision and recall, counted as turns happen (`RoutingMetrics.record_shown` / `record_called`):
recall is the share of calls whose tool the listing showed; precision is the share of shown tools
that were then called (each counted once per turn). What a session asked is scrubbed of anything
that looks like a credential or personal data before it is kept, and clipped.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Protocol

from colonnade.observability.redaction import scrub
from colonnade.observability.routing_metrics import RoutingMetrics

__all__ = [
    "TURN_RETENTION",
    "RoutingTurn",
    "RoutingTurns",
    "TurnCall",
    "TurnSink",
    "TurnsFlusher",
    "session_digest",
]

logger = logging.getLogger(__name__)

TURN_RETENTION = timedelta(days=7)
"""How long turns are kept: a week of real use to evaluate or export (`colonnade usage export`)."""

_MAX_QUERY = 500
_MAX_CALLS = 50
_MAX_SESSIONS = 10_000


def session_digest(key: str) -> str:
    """A session key as turns keep it: a digest (keys can hold a caller's own session id)."""
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class TurnCall:
    tool: str
    outcome: str
    """`success` or `error` (what the routed surface learns of a call)."""
    at: datetime


@dataclass(frozen=True, slots=True)
class RoutingTurn:
    id: str
    at: datetime
    session: str
    consumer: str | None
    tenant: str | None
    query: str
    shown: tuple[str, ...]
    confidence: float
    fallback: bool
    calls: tuple[TurnCall, ...] = field(default=())

    @property
    def called_shown(self) -> int:
        """How many distinct shown tools were called in this turn."""
        return len({call.tool for call in self.calls} & set(self.shown))


def _clean(text: str | None) -> str | None:
    if text is None:
        return None
    cleaned = scrub(text.replace("\x00", ""))
    assert isinstance(cleaned, str)
    return cleaned


class RoutingTurns:
    """The open turn of each routed session, and the turns changed since the last flush."""

    def __init__(self, metrics: RoutingMetrics | None = None) -> None:
        self.metrics = metrics
        self._lock = threading.Lock()
        self._open: OrderedDict[str, RoutingTurn] = OrderedDict()
        self._dirty: dict[str, RoutingTurn] = {}

    def listed(
        self,
        session_key: str,
        *,
        consumer: str | None,
        tenant: str | None,
        query: str,
        shown: tuple[str, ...],
        confidence: float,
        fallback: bool,
    ) -> RoutingTurn:
        """A routed listing: it opens the session's next turn."""
        turn = RoutingTurn(
            id=secrets.token_hex(16),
            at=datetime.now(UTC),
            session=session_digest(session_key),
            consumer=_clean(consumer),
            tenant=tenant,
            query=(_clean(query) or "")[:_MAX_QUERY],
            shown=shown,
            confidence=round(confidence, 4),
            fallback=fallback,
        )
        with self._lock:
            self._open[session_key] = turn
            self._open.move_to_end(session_key)
            while len(self._open) > _MAX_SESSIONS:
                self._open.popitem(last=False)
            self._dirty[turn.id] = turn
        if self.metrics is not None:
            self.metrics.record_shown(len(shown))
        return turn

    def called(self, session_key: str, tool: str, ok: bool) -> RoutingTurn | None:
        """A call of a routed session, added to its open turn (None: the session has no listing yet)."""
        with self._lock:
            turn = self._open.get(session_key)
            if turn is None or len(turn.calls) >= _MAX_CALLS:
                return None
            first_of_shown = tool in turn.shown and all(call.tool != tool for call in turn.calls)
            call = TurnCall(tool, "success" if ok else "error", datetime.now(UTC))
            turn = self._open[session_key] = replace(turn, calls=(*turn.calls, call))
            self._dirty[turn.id] = turn
        if self.metrics is not None:
            self.metrics.record_called(shown=tool in turn.shown, first_of_shown=first_of_shown)
        return turn

    def drain(self) -> list[RoutingTurn]:
        """The turns opened or changed since the last drain (each in its latest form)."""
        with self._lock:
            turns, self._dirty = list(self._dirty.values()), {}
        return turns

    def restore(self, turns: list[RoutingTurn]) -> None:
        """Put back turns the store refused; a newer form recorded meanwhile wins."""
        with self._lock:
            for turn in turns:
                self._dirty.setdefault(turn.id, turn)


class TurnSink(Protocol):
    async def save(self, turns: list[RoutingTurn]) -> None: ...

    async def purge_before(self, cutoff: datetime) -> int: ...


class TurnsFlusher:
    """Every `interval_s`, writes the turns that changed; a failed write keeps them for the next round."""

    def __init__(self, turns: RoutingTurns, sink: TurnSink, *, interval_s: float = 10.0) -> None:
        self.turns = turns
        self.sink = sink
        self.interval_s = interval_s

    async def flush(self) -> int:
        turns = self.turns.drain()
        if not turns:
            return 0
        try:
            await self.sink.save(turns)
        except BaseException:
            self.turns.restore(turns)
            raise
        return len(turns)

    async def purge(self, now: datetime | None = None) -> int:
        """Drop turns older than `TURN_RETENTION`; returns how many went."""
        return await self.sink.purge_before((now or datetime.now(UTC)) - TURN_RETENTION)

    async def run(self) -> None:
        rounds = 0
        try:
            while True:
                await asyncio.sleep(self.interval_s)
                try:
                    await self.flush()
                    rounds += 1
                    if rounds % 30 == 1:
                        await self.purge()
                except Exception:
                    logger.exception("writing the routing turns failed; they are kept for the next round")
        finally:
            try:
                await asyncio.shield(self.flush())
            except BaseException:
                logger.warning("the last routing turns were not written at shutdown")
