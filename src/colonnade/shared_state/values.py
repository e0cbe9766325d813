"""Small shared values with an expiry (session records, page logins, ownership marks).

`SharedValues` is the interface; `LocalValues` keeps them in this process (one replica) and
`RedisValues` in Redis, under the gateway's key prefix. Values are bytes: each user encodes its own
records. A Redis that is away raises `SharedStateUnavailable`.
"""

from __future__ import annotations

import time
from typing import Protocol

from colonnade.shared_state.link import RedisLink

__all__ = ["LocalValues", "RedisValues", "SharedValues"]


class SharedValues(Protocol):
    async def get(self, key: str) -> bytes | None: ...

    async def set(self, key: str, value: bytes, *, ttl_s: float) -> None: ...

    async def add(self, key: str, value: bytes, *, ttl_s: float) -> bool:
        """Set only when absent; True when this call set it (a claim)."""
        ...

    async def delete(self, key: str) -> None: ...


class LocalValues:
    """In-process values, expired lazily on read; beyond `max_items` the expired, then the oldest, go."""

    def __init__(self, max_items: int = 100_000) -> None:
        self.max_items = max_items
        self._items: dict[str, tuple[bytes, float]] = {}

    async def get(self, key: str) -> bytes | None:
        item = self._items.get(key)
        if item is None:
            return None
        value, expires = item
        if expires <= time.monotonic():
            del self._items[key]
            return None
        return value

    async def set(self, key: str, value: bytes, *, ttl_s: float) -> None:
        now = time.monotonic()
        self._items.pop(key, None)
        if len(self._items) >= self.max_items:
            for stale in [k for k, (_, expires) in self._items.items() if expires <= now]:
                del self._items[stale]
            while len(self._items) >= self.max_items:
                del self._items[next(iter(self._items))]
        self._items[key] = (value, now + ttl_s)

    def __len__(self) -> int:
        return len(self._items)

    async def add(self, key: str, value: bytes, *, ttl_s: float) -> bool:
        if await self.get(key) is not None:
            return False
        await self.set(key, value, ttl_s=ttl_s)
        return True

    async def delete(self, key: str) -> None:
        self._items.pop(key, None)


class RedisValues:
    """Values in Redis: `SET key value PX ttl` (`NX` for `add`)."""

    def __init__(self, link: RedisLink, prefix: str) -> None:
        self._link = link
        self._prefix = f"{prefix}:value:"

    async def get(self, key: str) -> bytes | None:
        value = await self._link.run(lambda r: r.get(self._prefix + key))
        if value is None:
            return None
        return value.encode() if isinstance(value, str) else bytes(value)

    async def set(self, key: str, value: bytes, *, ttl_s: float) -> None:
        await self._link.run(lambda r: r.set(self._prefix + key, value, px=_ms(ttl_s)))

    async def add(self, key: str, value: bytes, *, ttl_s: float) -> bool:
        done = await self._link.run(lambda r: r.set(self._prefix + key, value, px=_ms(ttl_s), nx=True))
        return bool(done)

    async def delete(self, key: str) -> None:
        await self._link.run(lambda r: r.delete(self._prefix + key))


def _ms(ttl_s: float) -> int:
    return max(1, int(ttl_s * 1000))
