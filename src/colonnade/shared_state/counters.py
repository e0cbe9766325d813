"""Counters for rate limits: requests per sliding window and concurrent-call slots with a lease.

`Counters` is the interface; `LocalCounters` counts in this process (one replica, or a replica's
own share while Redis is away) and `RedisCounters` in Redis, so that every replica counts against
the same numbers. One `take()` checks every window and slot a call is subject to and, only when all
have room, counts the call in each: one Lua script, one round trip, atomic across replicas.

A window is a sliding log (a sorted set of call times): exact, a call is refused when the window
already holds `limit` calls, and `retry_after_ms` is when the oldest one that matters leaves it.
It keeps one entry per call in the window (about 60 bytes each in Redis). Times come from Redis's
own clock (`TIME`), so replicas with skewed clocks still count one window. A slot is a lease that
ends when the call releases it, or at `lease_ms` if the replica holding it died.
"""

from __future__ import annotations

import itertools
import time
import uuid
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol

import redis.asyncio as redis_asyncio

from colonnade.shared_state.link import RedisLink

__all__ = [
    "CounterVerdict",
    "Counters",
    "LocalCounters",
    "RedisCounters",
    "SlotCheck",
    "Usage",
    "WindowCheck",
]

SLOT_RETRY_MS = 100
"""What a refused slot asks the caller to wait: a slot frees when any call ends, usually soon."""


@dataclass(frozen=True, slots=True)
class WindowCheck:
    """At most `limit` calls under `key` in any `window_ms`."""

    key: str
    limit: int
    window_ms: int


@dataclass(frozen=True, slots=True)
class SlotCheck:
    """At most `limit` calls under `key` at once; a slot not released ends after `lease_ms`."""

    key: str
    limit: int
    lease_ms: int


class Usage(NamedTuple):
    """One check after `take()`: calls counted (this one included when admitted), and when the
    oldest of them leaves the window (ms; for a slot, when the earliest lease would end)."""

    used: int
    reset_ms: int


@dataclass(frozen=True, slots=True)
class CounterVerdict:
    """`refused` is the index of the first check without room (windows first, then slots), or None."""

    refused: int | None
    retry_after_ms: int
    usage: tuple[Usage, ...]
    holder: str

    @property
    def admitted(self) -> bool:
        return self.refused is None


class Counters(Protocol):
    async def take(self, windows: Sequence[WindowCheck], slots: Sequence[SlotCheck]) -> CounterVerdict:
        """Count one call in every check, or in none when one has no room."""
        ...

    async def release(self, slots: Sequence[SlotCheck], holder: str) -> None:
        """Give back the slots an admitted call took (`holder` is its verdict's)."""
        ...


_serial = itertools.count()


def _holder() -> str:
    return f"{_PROCESS}:{next(_serial)}"


_PROCESS = uuid.uuid4().hex[:12]


class LocalCounters:
    """Windows and slots in this process (monotonic clock, expired lazily)."""

    SWEEP_EVERY = 4096
    """Takes between two sweeps of the counts nobody used for a whole window (callers come and go)."""

    def __init__(self) -> None:
        self._windows: dict[str, deque[float]] = {}
        self._spans: dict[str, int] = {}
        self._slots: dict[str, dict[str, float]] = {}
        self._takes = 0

    async def take(self, windows: Sequence[WindowCheck], slots: Sequence[SlotCheck]) -> CounterVerdict:
        return self.take_now(windows, slots)

    def take_now(self, windows: Sequence[WindowCheck], slots: Sequence[SlotCheck]) -> CounterVerdict:
        """`take()` without awaiting: nothing here waits, so a check and its count cannot interleave."""
        now = time.monotonic() * 1000
        self._takes += 1
        if self._takes % self.SWEEP_EVERY == 0:
            self._sweep(now)
        refused: int | None = None
        retry_ms = 0
        logs = [self._window(check, now) for check in windows]
        leases = [self._leases(check, now) for check in slots]
        for index, (check, log) in enumerate(zip(windows, logs, strict=True)):
            if len(log) >= check.limit:
                refused = index
                retry_ms = int(log[len(log) - check.limit] + check.window_ms - now) + 1
                break
        if refused is None:
            for offset, (slot, held) in enumerate(zip(slots, leases, strict=True)):
                if len(held) >= slot.limit:
                    refused = len(windows) + offset
                    retry_ms = SLOT_RETRY_MS
                    break
        holder = _holder()
        if refused is None:
            for log in logs:
                log.append(now)
            for slot, held in zip(slots, leases, strict=True):
                held[holder] = now + slot.lease_ms
        usage = tuple(
            [
                Usage(len(log), max(0, int(log[0] + c.window_ms - now))) if log else Usage(0, c.window_ms)
                for c, log in zip(windows, logs, strict=True)
            ]
            + [Usage(len(held), max(0, int(min(held.values()) - now)) if held else 0) for held in leases]
        )
        return CounterVerdict(refused, max(1, retry_ms) if refused is not None else 0, usage, holder)

    async def release(self, slots: Sequence[SlotCheck], holder: str) -> None:
        self.release_now(slots, holder)

    def release_now(self, slots: Sequence[SlotCheck], holder: str) -> None:
        for check in slots:
            held = self._slots.get(check.key)
            if held is not None:
                held.pop(holder, None)
                if not held:
                    del self._slots[check.key]

    def clear(self) -> None:
        """Forget every count (a replica leaving its local share for the shared counters)."""
        self._windows.clear()
        self._spans.clear()
        self._slots.clear()

    def _sweep(self, now: float) -> None:
        stale = [k for k, log in self._windows.items() if not log or log[-1] <= now - self._spans[k]]
        for key in stale:
            del self._windows[key]
            del self._spans[key]
        for key in [k for k, held in self._slots.items() if all(ends <= now for ends in held.values())]:
            del self._slots[key]

    def _window(self, check: WindowCheck, now: float) -> deque[float]:
        log = self._windows.get(check.key)
        if log is None:
            log = self._windows[check.key] = deque()
            self._spans[check.key] = check.window_ms
        start = now - check.window_ms
        while log and log[0] <= start:
            log.popleft()
        return log

    def _leases(self, check: SlotCheck, now: float) -> dict[str, float]:
        held = self._slots.get(check.key)
        if held is None:
            held = self._slots[check.key] = {}
        for holder in [h for h, ends in held.items() if ends <= now]:
            del held[holder]
        return held


# KEYS: the window keys, then the slot keys. ARGV: the number of windows, the holder, then
# limit and span (window or lease, ms) per key. Returns the refused key's 1-based index (0: all
# admitted), the wait, then used and reset (ms) per key.
_TAKE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local windows = tonumber(ARGV[1])
local holder = ARGV[2]
local refused, retry = 0, 0
local out = {}
for i, key in ipairs(KEYS) do
  local limit, span = tonumber(ARGV[1 + 2 * i]), tonumber(ARGV[2 + 2 * i])
  local window = i <= windows
  redis.call('ZREMRANGEBYSCORE', key, '-inf', window and (now - span) or now)
  local used = redis.call('ZCARD', key)
  local reset = window and span or 0
  local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  if first[2] then
    reset = window and (tonumber(first[2]) + span - now) or (tonumber(first[2]) - now)
  end
  if refused == 0 and used >= limit then
    refused = i
    if window then
      local edge = redis.call('ZRANGE', key, used - limit, used - limit, 'WITHSCORES')
      retry = tonumber(edge[2]) + span - now + 1
    else
      retry = tonumber(ARGV[3 + 2 * #KEYS])
    end
  end
  out[#out + 1] = used
  out[#out + 1] = reset
end
if refused == 0 then
  for i, key in ipairs(KEYS) do
    local span = tonumber(ARGV[2 + 2 * i])
    if i <= windows then
      redis.call('ZADD', key, now, holder)
    else
      redis.call('ZADD', key, now + span, holder)
    end
    if redis.call('PTTL', key) < span then
      redis.call('PEXPIRE', key, span)
    end
    out[2 * i - 1] = out[2 * i - 1] + 1
  end
end
table.insert(out, 1, retry)
table.insert(out, 1, refused)
return out
"""


class RedisCounters:
    """Windows and slots in Redis under `<prefix>:limit:`; a Redis that is away raises
    `SharedStateUnavailable` (the limiter then counts the replica's local share)."""

    def __init__(self, link: RedisLink, prefix: str) -> None:
        self._link = link
        self._prefix = f"{prefix}:limit:"
        self._script = link.client.register_script(_TAKE)

    async def take(self, windows: Sequence[WindowCheck], slots: Sequence[SlotCheck]) -> CounterVerdict:
        holder = _holder()
        keys = [self._prefix + c.key for c in windows] + [self._prefix + c.key for c in slots]
        args: list[int | str] = [len(windows), holder]
        for window in windows:
            args += [window.limit, window.window_ms]
        for slot in slots:
            args += [slot.limit, slot.lease_ms]
        args.append(SLOT_RETRY_MS)
        raw = await self._link.run(lambda r: self._script(keys=keys, args=args, client=r))
        values = [int(v) for v in raw]
        refused = values[0] - 1 if values[0] else None
        pairs = values[2:]
        usage = tuple(Usage(pairs[i], max(0, pairs[i + 1])) for i in range(0, len(pairs), 2))
        return CounterVerdict(refused, max(1, values[1]) if refused is not None else 0, usage, holder)

    async def release(self, slots: Sequence[SlotCheck], holder: str) -> None:
        keys = [self._prefix + check.key for check in slots]

        async def release_all(r: redis_asyncio.Redis) -> None:
            if len(keys) == 1:  # the common case: one command, no pipeline to build
                await r.zrem(keys[0], holder)
                return
            async with r.pipeline(transaction=False) as pipe:
                for key in keys:
                    pipe.zrem(key, holder)
                await pipe.execute()

        await self._link.run(release_all)
