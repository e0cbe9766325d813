"""Every change one replica makes, applied by the others within a second: the fan-out's wiring.

The owners publish their own changes once they are stored (governance: keys, agents,
subscriptions, policy reloads; `Servers`; the catalog's publish). This module connects the rest:
what the call path sees (a circuit opening, a backend's readiness changing, learned co-occurrence
saved) is published in the background, and each topic gets the handler that applies it here.
Without Redis the fan-out has nobody to tell and every handler stays idle; the polls
(`catalog_poll_s`, `auth.api_key_cache_s`, `policy.reload_interval_s`) carry changes either way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from colonnade.shared_state import Change
from colonnade.shared_state.topics import CIRCUIT_OPENED, HEALTH_CHANGED, ROUTING_LEARNED

if TYPE_CHECKING:
    from colonnade.runtime.gateway import Gateway

__all__ = ["share_changes"]


def share_changes(gateway: Gateway) -> None:
    """Publish the call path's changes and apply every topic's changes from the other replicas."""
    changes = gateway.shared.fanout
    gateway.governance.follow(changes)
    gateway.servers.follow(changes)
    if gateway.sync is not None:
        gateway.sync.follow(changes)
    if gateway.upstream_accounts is not None:
        gateway.upstream_accounts.follow(changes)

    circuits = gateway.circuits
    circuits.on_open = lambda backend, open_ms: changes.publish_soon(
        CIRCUIT_OPENED, {"backend": backend, "open_ms": open_ms}
    )

    async def circuit_opened(change: Change) -> None:
        backend, open_ms = change.payload.get("backend"), change.payload.get("open_ms")
        if isinstance(backend, str) and isinstance(open_ms, int):
            circuits.opened_elsewhere(backend, open_ms)

    changes.subscribe(CIRCUIT_OPENED, circuit_opened)

    health = gateway.health
    if health.on_change is None:
        health.on_change = lambda url, healthy: changes.publish_soon(
            HEALTH_CHANGED, {"url": url, "healthy": healthy}
        )

    async def health_changed(change: Change) -> None:
        url, healthy = change.payload.get("url"), change.payload.get("healthy")
        if isinstance(url, str) and isinstance(healthy, bool):
            await health.seen_elsewhere(url, healthy)

    changes.subscribe(HEALTH_CHANGED, health_changed)

    feedback = gateway.feedback
    feedback.on_saved = lambda: changes.publish_soon(ROUTING_LEARNED, {})

    async def learned(change: Change) -> None:
        await feedback.load()

    changes.subscribe(ROUTING_LEARNED, learned)
