"""The shared-state parts of one gateway, chosen once at start-up from `shared_state:` settings."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import uuid
from collections.abc import AsyncIterator
from typing import Any

from colonnade.config import SharedStateSettings
from colonnade.shared_state.counters import Counters, LocalCounters, RedisCounters
from colonnade.shared_state.fanout import Fanout
from colonnade.shared_state.link import RedisLink
from colonnade.shared_state.replicas import ReplicaSet
from colonnade.shared_state.values import LocalValues, RedisValues, SharedValues

__all__ = ["SharedState"]

logger = logging.getLogger(__name__)

STOP_WAIT_S = 5.0


class SharedState:
    """In-process parts without `redis_url`; Redis-backed ones with it (same interfaces)."""

    def __init__(
        self,
        settings: SharedStateSettings | None = None,
        *,
        replica_id: str | None = None,
        heartbeat_s: float = 2.0,
    ) -> None:
        settings = settings if settings is not None else SharedStateSettings()
        self.settings = settings
        self.replica_id = replica_id or settings.replica_id or uuid.uuid4().hex[:12]
        self.link: RedisLink | None = (
            RedisLink(
                settings.redis_url,
                op_timeout_s=settings.op_timeout_s,
                probe_interval_s=settings.probe_interval_s,
            )
            if settings.redis_url
            else None
        )
        prefix = settings.key_prefix
        self.values: SharedValues = RedisValues(self.link, prefix) if self.link is not None else LocalValues()
        self.fanout = Fanout(self.link, prefix=prefix, replica_id=self.replica_id)
        self.counters: Counters = (
            RedisCounters(self.link, prefix) if self.link is not None else LocalCounters()
        )
        self.replicas: ReplicaSet | None = (
            ReplicaSet(self.link, prefix, self.replica_id, interval_s=heartbeat_s)
            if self.link is not None
            else None
        )

    @property
    def degraded(self) -> bool:
        """True when Redis is configured but unreachable: each replica works from its own share."""
        return self.link is not None and not self.link.available

    def status(self) -> dict[str, Any]:
        """What `/v1/status` shows under `shared_state`."""
        if self.link is None:
            return {"backend": "process", "replica_id": self.replica_id, "degraded": False}
        down = self.link.down_since
        return {
            "backend": "redis",
            "url": self.link.safe_url,
            "replica_id": self.replica_id,
            "available": self.link.available,
            "degraded": not self.link.available,
            "degraded_since": dt.datetime.fromtimestamp(down, dt.UTC).isoformat()
            if down is not None
            else None,
            "last_error": self.link.last_error if not self.link.available else None,
            "changes_published": self.fanout.published,
            "changes_received": self.fanout.received,
        }

    async def start(self) -> None:
        """Check Redis once (a degraded start is allowed and reported, never fatal)."""
        if self.link is not None:
            await self.link.check()

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The link's probe and the change listener, while the gateway serves."""
        if self.link is None:
            yield
            return
        tasks = [
            asyncio.create_task(self.link.watch(), name="colonnade-shared-state-probe"),
            asyncio.create_task(self.fanout.run(), name="colonnade-shared-state-changes"),
        ]
        if self.replicas is not None:
            tasks.append(asyncio.create_task(self.replicas.run(), name="colonnade-shared-state-replicas"))
        try:
            yield
        finally:
            self.fanout.stop()
            for task in tasks:
                task.cancel()
            # A Redis client's own timeouts can swallow a cancellation that lands as they fire (Python
            # 3.11's asyncio.timeout); the loops also stop on their own flag, and stopping never
            # waits on them for long.
            await asyncio.wait(tasks, timeout=STOP_WAIT_S)
            for task in tasks:
                if not task.done():
                    logger.warning(
                        "shared state task %s did not stop in %.0f s", task.get_name(), STOP_WAIT_S
                    )
                elif not task.cancelled() and task.exception() is not None:
                    logger.warning("shared state task %s ended with %r", task.get_name(), task.exception())
            if self.replicas is not None:
                await self.replicas.leave()

    async def aclose(self) -> None:
        await self.fanout.sent()  # changes seen last (a circuit opening) still go out
        if self.link is not None:
            await self.link.aclose()
