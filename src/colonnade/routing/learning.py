"""Tools used together: co-occurrence learned from the calls of past sessions.

An agent that looked a customer up usually goes on to invoice them; counting which tools share a
session lets the router offer the next tool before the conversation names it. `CallFeedback` is
the hook the gateway calls after every successful call; it keeps each session's recent tools and
feeds them to `CoOccurrence`. The counts live in the database: every replica adds what it learned
since its last save (never overwrites), so replicas flushing at once lose no count.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

__all__ = ["CallFeedback", "CallTrails", "CoOccurrence", "CoOccurrenceCounts", "CoOccurrenceRepository"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class CoOccurrenceCounts:
    """Sessions per tool, and per ordered pair (given, other): saved totals or an unsaved delta."""

    uses: Mapping[str, int] = field(default_factory=dict)
    pairs: Mapping[tuple[str, str], int] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.uses or self.pairs)


class CoOccurrenceRepository(Protocol):
    """Where the counts are kept; `colonnade.store.co_occurrence_repo.CoOccurrenceStore` in the gateway."""

    async def load(self) -> CoOccurrenceCounts: ...

    async def add(self, delta: CoOccurrenceCounts) -> None: ...


def _add(counts: dict[str, int], key: str, amount: int) -> None:
    counts[key] = counts.get(key, 0) + amount


class CoOccurrence:
    """How often tools share a session: `affinity(a, b)` estimates P(b used | a used).

    Counts are per session and per distinct tool, so a tool called ten times in one session
    weighs as much as one called once. Only the last `window` distinct tools of a session pair
    up with a new one, which keeps long sessions from linking everything to everything.
    Next to the totals it keeps the unsaved delta: what was learned here since the last save.
    """

    def __init__(self, *, window: int = 8) -> None:
        if window < 1:
            raise ValueError(f"co-occurrence window must be at least 1, got {window}")
        self.window = window
        self._uses: dict[str, int] = {}
        self._together: dict[str, dict[str, int]] = {}
        self._unsaved_uses: dict[str, int] = {}
        self._unsaved_pairs: dict[tuple[str, str], int] = {}
        self._lock = threading.Lock()

    def observe(self, sequence: Iterable[str]) -> None:
        """Learn from one session's tools, in call order."""
        seen: list[str] = []
        for tool in sequence:
            if tool not in seen:
                self.observe_next(seen, tool)
                seen.append(tool)

    def observe_next(self, previous: Sequence[str], tool: str) -> None:
        """Learn that `tool` was just used in a session that had used `previous` (oldest first)."""
        if tool in previous:
            return
        with self._lock:
            _add(self._uses, tool, 1)
            _add(self._unsaved_uses, tool, 1)
            for other in previous[-self.window :]:
                for pair in ((other, tool), (tool, other)):
                    _add(self._together.setdefault(pair[0], {}), pair[1], 1)
                    self._unsaved_pairs[pair] = self._unsaved_pairs.get(pair, 0) + 1

    def affinity(self, given: str, other: str) -> float:
        """P(other | given), damped by one pseudo-session so a single sighting is not a certainty."""
        uses = self._uses.get(given, 0)
        if uses == 0 or given == other:
            return 0.0
        return self._together.get(given, {}).get(other, 0) / (uses + 1)

    def neighbours(self, tool: str, limit: int = 10) -> list[tuple[str, float]]:
        """The tools most often used with `tool`, strongest first."""
        partners = self._together.get(tool, {})
        ranked = sorted(partners, key=lambda other: (-partners[other], other))[:limit]
        return [(other, self.affinity(tool, other)) for other in ranked]

    def __len__(self) -> int:
        return len(self._uses)

    @property
    def has_unsaved(self) -> bool:
        return bool(self._unsaved_uses or self._unsaved_pairs)

    def take_unsaved(self) -> CoOccurrenceCounts:
        """Hand the unsaved delta over for saving; it is no longer counted as unsaved here."""
        with self._lock:
            delta = CoOccurrenceCounts(self._unsaved_uses, self._unsaved_pairs)
            self._unsaved_uses, self._unsaved_pairs = {}, {}
        return delta

    def keep_unsaved(self, delta: CoOccurrenceCounts) -> None:
        """Take back a delta whose save failed, so that the next save carries it."""
        with self._lock:
            for tool, uses in delta.uses.items():
                _add(self._unsaved_uses, tool, uses)
            for pair, together in delta.pairs.items():
                self._unsaved_pairs[pair] = self._unsaved_pairs.get(pair, 0) + together

    def adopt(self, saved: CoOccurrenceCounts) -> None:
        """Replace the totals by the saved ones plus the unsaved delta (learned since the last save)."""
        with self._lock:
            uses = dict(saved.uses)
            together: dict[str, dict[str, int]] = {}
            for (given, other), count in saved.pairs.items():
                together.setdefault(given, {})[other] = count
            for tool, count in self._unsaved_uses.items():
                _add(uses, tool, count)
            for (given, other), count in self._unsaved_pairs.items():
                _add(together.setdefault(given, {}), other, count)
            self._uses, self._together = uses, together


class CallTrails:
    """The recent distinct tools of each session, for the most recently active sessions."""

    def __init__(self, *, max_sessions: int = 10_000, length: int = 16) -> None:
        self.max_sessions = max_sessions
        self.length = length
        self._trails: OrderedDict[str, tuple[str, ...]] = OrderedDict()
        self._lock = threading.Lock()

    def record(self, session: str, tool: str) -> tuple[str, ...]:
        """Append `tool` (moved to the end if seen); returns the trail as it was before."""
        with self._lock:
            before = self._trails.pop(session, ())
            after = (*(t for t in before if t != tool), tool)[-self.length :]
            self._trails[session] = after
            while len(self._trails) > self.max_sessions:
                self._trails.popitem(last=False)
        return before

    def restore(self, session: str, tools: Sequence[str]) -> None:
        """Take a session's trail as another replica left it (the session moved here)."""
        with self._lock:
            self._trails.pop(session, None)
            self._trails[session] = tuple(tools)[-self.length :]
            while len(self._trails) > self.max_sessions:
                self._trails.popitem(last=False)

    def tools(self, session: str) -> tuple[str, ...]:
        """The session's recent tools, oldest first (empty for an unknown session)."""
        return self._trails.get(session, ())


class CallFeedback:
    """The hook the gateway calls after each successful call: session trail plus co-occurrence.

    Learned counts are added to the repository after every `save_every` calls that taught something
    (in a background task) and at `aclose`; a failed save is logged and retried with the next one.
    After a save `on_saved` is told (the gateway then has the other replicas `load()` the totals),
    so what one replica learns reaches the others' routing.
    """

    def __init__(
        self,
        learned: CoOccurrence,
        *,
        trails: CallTrails | None = None,
        repository: CoOccurrenceRepository | None = None,
        save_every: int = 50,
    ) -> None:
        if save_every < 1:
            raise ValueError(f"co-occurrence save_every must be at least 1, got {save_every}")
        self.learned = learned
        self.trails = trails or CallTrails()
        self.repository = repository
        self.save_every = save_every
        self._unsaved = 0
        self._saving = asyncio.Lock()
        self._flushing: asyncio.Task[None] | None = None
        self.on_saved: Callable[[], None] | None = None

    async def load(self) -> None:
        """Start from the saved totals; if they cannot be read, learn afresh (new counts still add up)."""
        if self.repository is None:
            return
        async with self._saving:
            try:
                saved = await self.repository.load()
            except Exception as exc:  # the gateway serves without learned boosts rather than not at all
                logger.warning(
                    "cannot load learned tool co-occurrence (%s); routing starts without it and new "
                    "counts are still saved; check the database connection",
                    exc,
                )
                return
            self.learned.adopt(saved)

    def after_success(self, session: str | None, tool: str) -> None:
        """Record one successful call; calls without a session teach nothing about pairs."""
        if session is None:
            return
        before = self.trails.record(session, tool)
        if tool in before:
            return
        self.learned.observe_next(before, tool)
        self._unsaved += 1
        if self._unsaved >= self.save_every:
            self._flush_soon()

    def session_tools(self, session: str | None) -> tuple[str, ...]:
        return () if session is None else self.trails.tools(session)

    async def flush(self) -> None:
        """Add the unsaved delta to the repository; a failed save is logged, never raised into a call."""
        if self.repository is None:
            return
        async with self._saving:
            self._unsaved = 0
            delta = self.learned.take_unsaved()
            if not delta:
                return
            try:
                await self.repository.add(delta)
            except BaseException as exc:
                self.learned.keep_unsaved(delta)
                if not isinstance(exc, Exception):
                    raise
                logger.warning(
                    "cannot save learned tool co-occurrence (%s); kept in memory and retried with the "
                    "next save; check the database connection",
                    exc,
                )
                return
        if self.on_saved is not None:
            self.on_saved()

    async def aclose(self) -> None:
        """Wait for a save under way, then save what is left (the gateway calls this at shutdown)."""
        if self._flushing is not None:
            await asyncio.wait({self._flushing})  # its outcome was logged; a cancelled save kept its delta
        await self.flush()

    def _flush_soon(self) -> None:
        """Save in the background; with no running event loop the counts wait for the next flush."""
        if self.repository is None or (self._flushing is not None and not self._flushing.done()):
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._flushing = loop.create_task(self.flush(), name="colonnade-co-occurrence-save")
