"""Which platform resources changed: published by the core tools and the alert rules, heard by the
MCP surface, which tells the clients subscribed to them (`notifications/resources/updated`, or an
event on a 2026-07-28 `subscriptions/listen` stream)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable

__all__ = ["ResourceChanges"]

logger = logging.getLogger(__name__)

Listener = Callable[[frozenset[str]], Awaitable[None]]


class ResourceChanges:
    def __init__(self) -> None:
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    async def publish(self, uris: Iterable[str]) -> None:
        changed = frozenset(uris)
        if not changed:
            return
        for listener in list(self._listeners):
            try:
                await listener(changed)
            except Exception:  # a listener's failure must not fail the write that changed the data
                logger.exception("telling listeners that %s changed failed", sorted(changed))
