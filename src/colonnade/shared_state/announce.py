"""Telling the running replicas about a change made outside them (the CLI acting on the database).

Without `shared_state.redis_url` there is nobody to tell: the gateways' polls pick the change up,
as they always did. With it, the change reaches every replica within a second.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from colonnade.config import SharedStateSettings
from colonnade.shared_state.fanout import Fanout
from colonnade.shared_state.hub import SharedState

__all__ = ["announce", "announcer"]


@contextlib.asynccontextmanager
async def announcer(settings: SharedStateSettings) -> AsyncIterator[Fanout]:
    """A fan-out that only publishes (this process listens to nobody), closed afterwards."""
    shared = SharedState(settings, replica_id="cli")
    try:
        yield shared.fanout
    finally:
        await shared.aclose()


async def announce(settings: SharedStateSettings, topic: str, payload: dict[str, Any]) -> bool:
    """Publish one change; False when nobody could be told (no Redis configured, or Redis away)."""
    async with announcer(settings) as changes:
        return await changes.publish(topic, payload)
