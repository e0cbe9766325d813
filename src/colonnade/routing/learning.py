"""Tools used together: co-occurrence learned from the calls of past sessions.

An agent that looked a customer up usually goes on to invoice them; counting which tools share a
session lets the router offer the next tool before the conversation names it. `CallFeedback` is
the hook the gateway calls after every successful call; it keeps each session's recent tools and
feeds them to `CoOccurrence`, which is saved as JSON under the data directory.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["CallFeedback", "CallTrails", "CoOccurrence", "LearningFileError"]

logger = logging.getLogger(__name__)
_FORMAT = "colonnade.co_occurrence/1"


class LearningFileError(Exception):
    """The saved co-occurrence file cannot be read; says which file and how to recover."""


class CoOccurrence:
    """How often tools share a session: `affinity(a, b)` estimates P(b used | a used).

    Counts are per session and per distinct tool, so a tool called ten times in one session
    weighs as much as one called once. Only the last `window` distinct tools of a session pair
    up with a new one, which keeps long sessions from linking everything to everything.
    """

    def __init__(self, *, window: int = 8) -> None:
        if window < 1:
            raise ValueError(f"co-occurrence window must be at least 1, got {window}")
        self.window = window
        self._uses: dict[str, int] = {}
        self._together: dict[str, dict[str, int]] = {}
        self._lock = threading.Lock()
        self.dirty = False

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
            self._uses[tool] = self._uses.get(tool, 0) + 1
            for other in previous[-self.window :]:
                self._count(other, tool)
                self._count(tool, other)
            self.dirty = True

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

    def to_json(self) -> dict[str, Any]:
        with self._lock:
            return {
                "format": _FORMAT,
                "window": self.window,
                "uses": dict(self._uses),
                "together": {tool: dict(partners) for tool, partners in self._together.items()},
            }

    @classmethod
    def from_json(cls, data: Any, *, source: str = "co-occurrence data") -> CoOccurrence:
        if not isinstance(data, dict) or data.get("format") != _FORMAT:
            raise LearningFileError(
                f"{source}: not a co-occurrence file (expected format {_FORMAT!r}); delete it to start afresh"
            )
        learned = cls(window=int(data.get("window", 8)))
        try:
            learned._uses = {str(k): int(v) for k, v in data["uses"].items()}
            learned._together = {
                str(tool): {str(k): int(v) for k, v in partners.items()}
                for tool, partners in data["together"].items()
            }
        except (KeyError, AttributeError, TypeError, ValueError) as exc:
            raise LearningFileError(f"{source}: malformed co-occurrence counts ({exc}); delete it") from None
        return learned

    def save(self, path: Path) -> None:
        """Write atomically (a crash never leaves half a file) and mark the counts clean."""
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        partial.write_text(json.dumps(self.to_json(), separators=(",", ":")), encoding="utf-8")
        os.replace(partial, path)
        self.dirty = False

    @classmethod
    def load(cls, path: Path, *, window: int = 8) -> CoOccurrence:
        """The saved counts, or empty ones when nothing was saved yet."""
        if not path.exists():
            return cls(window=window)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise LearningFileError(f"{path}: cannot read co-occurrence counts ({exc}); delete it") from None
        return cls.from_json(data, source=str(path))

    def _count(self, given: str, other: str) -> None:
        partners = self._together.setdefault(given, {})
        partners[other] = partners.get(other, 0) + 1


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

    def tools(self, session: str) -> tuple[str, ...]:
        """The session's recent tools, oldest first (empty for an unknown session)."""
        return self._trails.get(session, ())


class CallFeedback:
    """The hook the gateway calls after each successful call: session trail plus co-occurrence."""

    def __init__(
        self,
        learned: CoOccurrence,
        *,
        trails: CallTrails | None = None,
        path: Path | None = None,
        save_every: int = 50,
    ) -> None:
        self.learned = learned
        self.trails = trails or CallTrails()
        self.path = path
        self.save_every = save_every
        self._unsaved = 0

    @classmethod
    def open(cls, path: Path | None, *, save_every: int = 50) -> CallFeedback:
        """Feedback over the counts saved at `path`; a damaged file is logged and later overwritten."""
        learned = CoOccurrence()
        if path is not None:
            try:
                learned = CoOccurrence.load(path)
            except LearningFileError as exc:
                logger.warning("starting co-occurrence learning afresh: %s", exc)
        return cls(learned, path=path, save_every=save_every)

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
            self.flush()

    def session_tools(self, session: str | None) -> tuple[str, ...]:
        return () if session is None else self.trails.tools(session)

    def flush(self) -> None:
        """Save unsaved counts; a failed save is logged, never raised into a call."""
        if self.path is None or not self.learned.dirty:
            return
        try:
            self.learned.save(self.path)
            self._unsaved = 0
        except OSError as exc:
            logger.warning("cannot save co-occurrence counts to %s: %s", self.path, exc)
