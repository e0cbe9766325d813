"""Which replicas are alive, so that each knows its share of a limit when Redis goes away.

Every replica writes its id with the time into one sorted set every `interval_s`; the live ones
are those seen within three intervals. The largest of the last three counts is kept (a Redis that
restarted empty takes an interval to see every replica again): it is what a replica divides each
limit by while Redis is unreachable (unless `limits.replicas` says it outright).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque

import redis.asyncio as redis_asyncio

from colonnade.shared_state.link import RedisLink, SharedStateUnavailable

__all__ = ["ReplicaSet"]


class ReplicaSet:
    def __init__(self, link: RedisLink, prefix: str, replica_id: str, *, interval_s: float = 2.0) -> None:
        self._link = link
        self._key = f"{prefix}:replicas"
        self.replica_id = replica_id
        self.interval_s = interval_s
        self._counts: deque[int] = deque(maxlen=3)

    @property
    def live(self) -> int | None:
        """Replicas seen alive at the last heartbeats (None before the first one answered)."""
        return max(self._counts) if self._counts else None

    async def beat(self) -> int:
        """Say this replica is alive and count the live ones (raises `SharedStateUnavailable`)."""
        now = time.time()
        stale = now - 3 * self.interval_s

        async def beat(r: redis_asyncio.Redis) -> int:
            async with r.pipeline(transaction=True) as pipe:
                pipe.zadd(self._key, {self.replica_id: now})
                pipe.zremrangebyscore(self._key, "-inf", stale)
                pipe.zcard(self._key)
                pipe.pexpire(self._key, int(6 * self.interval_s * 1000))
                replies = await pipe.execute()
            return int(replies[2])

        count = await self._link.run(beat)
        self._counts.append(count)
        return count

    async def run(self) -> None:
        """Beat for the gateway's lifetime; a Redis that is away keeps the last count."""
        while True:
            with contextlib.suppress(SharedStateUnavailable):
                await self.beat()
            await asyncio.sleep(self.interval_s)

    async def leave(self) -> None:
        """Take this replica out of the set (a clean stop), so the others' shares grow at once."""
        with contextlib.suppress(SharedStateUnavailable):
            await self._link.run(lambda r: r.zrem(self._key, self.replica_id))
