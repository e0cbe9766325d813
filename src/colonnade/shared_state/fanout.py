"""Changes that every replica must see at once: revocations, policy reloads, publishes, server changes.

A replica that makes a change applies it itself, then `publish()`es it; the others receive it
over Redis pub/sub within milliseconds and apply it too. Without Redis (one replica) there is no
one to tell and `publish()` does nothing. Pub/sub delivers only to who is listening, so after a gap
(Redis restarted, connection lost) every subscriber gets a `resync` change: reload from the
database, as the periodic poll would. The poll stays as the fallback either way.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections import defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, cast

import orjson
import redis.asyncio as redis_asyncio
from redis.exceptions import RedisError

from colonnade.shared_state.link import RedisLink, SharedStateUnavailable

__all__ = ["Change", "ChangeHandler", "Fanout"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Change:
    """One change on one topic; `resync` means "changes may have been missed: reload"."""

    topic: str
    payload: dict[str, Any] = field(default_factory=dict)
    origin: str = ""
    resync: bool = False


ChangeHandler = Callable[[Change], Awaitable[None]]


class Fanout:
    """`subscribe(topic, handler)` before `run()`; `await publish(topic, {...})` after a change."""

    def __init__(
        self, link: RedisLink | None, *, prefix: str = "colonnade", replica_id: str | None = None
    ) -> None:
        self._link = link
        self.channel = f"{prefix}:changes"
        self.replica_id = replica_id or uuid.uuid4().hex[:12]
        self._handlers: dict[str, list[ChangeHandler]] = defaultdict(list)
        self.received = 0
        self.published = 0
        self._listening = asyncio.Event()
        self._stopped = False
        self._sending: set[asyncio.Task[bool]] = set()

    @property
    def shared(self) -> bool:
        """True when changes reach other replicas (a Redis link), False for one process."""
        return self._link is not None

    def subscribe(self, topic: str, handler: ChangeHandler) -> None:
        self._handlers[topic].append(handler)

    async def publish(self, topic: str, payload: dict[str, Any] | None = None) -> bool:
        """Tell the other replicas; False when nobody could be told (no Redis, or Redis away)."""
        if self._link is None:
            return False
        message = orjson.dumps({"topic": topic, "payload": payload or {}, "origin": self.replica_id})
        try:
            await self._link.run(lambda r: r.publish(self.channel, message))
        except SharedStateUnavailable:
            logger.debug("change %s not fanned out: Redis unreachable; the poll carries it", topic)
            return False
        self.published += 1
        return True

    def publish_soon(self, topic: str, payload: dict[str, Any] | None = None) -> None:
        """`publish` in the background, for changes seen on a call's path (which never waits on Redis)."""
        if self._link is None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop, no listener either: nothing to tell
        task = loop.create_task(self.publish(topic, payload), name=f"colonnade-publish-{topic}")
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    async def sent(self) -> None:
        """Wait for the background publishes under way (shutdown, tests)."""
        if self._sending:
            await asyncio.gather(*self._sending, return_exceptions=True)

    def stop(self) -> None:
        """End `run()` at its next turn (with its task's cancellation, which a client may swallow)."""
        self._stopped = True

    async def listening(self) -> None:
        """Return once this replica is subscribed (tests; start-up ordering)."""
        await self._listening.wait()

    async def run(self) -> None:
        """Receive the other replicas' changes for the gateway's lifetime, resubscribing after a gap."""
        if self._link is None:
            return
        first = True
        while not self._stopped:
            client = redis_asyncio.Redis.from_url(
                self._link.url, socket_connect_timeout=self._link.op_timeout_s, health_check_interval=5
            )
            pubsub = client.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(self.channel)
                self._listening.set()
                if not first:
                    await self._deliver_resync()
                first = False
                while not self._stopped:
                    message = await pubsub.get_message(timeout=1.0)
                    if message is not None and message.get("type") == "message":
                        await self._deliver(message["data"])
            except asyncio.CancelledError:
                raise
            except (RedisError, OSError) as exc:
                self._listening.clear()
                self._link.mark_down(exc)
                first = False
                await asyncio.sleep(self._link.probe_interval_s)
            finally:
                with contextlib.suppress(Exception):
                    await cast(Any, pubsub).aclose()  # typed in some redis-py releases, not in others
                with contextlib.suppress(Exception):
                    await client.aclose()

    async def _deliver(self, data: bytes) -> None:
        try:
            message = orjson.loads(data)
            change = Change(
                topic=str(message["topic"]),
                payload=dict(message.get("payload") or {}),
                origin=str(message["origin"]),
            )
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            logger.warning("ignored a malformed change on %s: %.200r", self.channel, data)
            return
        if change.origin == self.replica_id:
            return
        self.received += 1
        await self._run_handlers(change.topic, change)

    async def _deliver_resync(self) -> None:
        for topic in list(self._handlers):
            await self._run_handlers(topic, Change(topic=topic, origin=self.replica_id, resync=True))

    async def _run_handlers(self, topic: str, change: Change) -> None:
        for handler in self._handlers.get(topic, ()):
            try:
                await handler(change)
            except Exception:  # one subscriber's failure must not stop the others or the listener
                logger.exception("applying change %s from replica %s failed", topic, change.origin)
