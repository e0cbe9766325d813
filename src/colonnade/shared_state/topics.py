"""The fan-out topics: one per kind of change that every replica must apply within a second.

Each payload carries the least a receiver needs to act (ids and states, never a secret); the
receiver re-reads the rest from where it lives (the database, its own files). A `resync` change
on a topic means "changes may have been missed": reload that kind from the store.
"""

from __future__ import annotations

__all__ = [
    "AGENT_CHANGED",
    "CATALOG_CHANGED",
    "CIRCUIT_OPENED",
    "HEALTH_CHANGED",
    "KEY_CHANGED",
    "POLICY_RELOADED",
    "ROUTING_LEARNED",
    "SECRET_CHANGED",
    "SERVER_CHANGED",
    "SUBSCRIPTION_CHANGED",
    "TOPICS",
    "UPSTREAM_GRANTS_REMOVED",
]

KEY_CHANGED = "key.changed"
"""An API key was revoked or rotated: `{"key_id"}`; receivers forget their cached record of it."""
AGENT_CHANGED = "agent.changed"
"""An agent was registered or revoked (its tokens with it): `{}`; receivers re-read the agents."""
SUBSCRIPTION_CHANGED = "subscription.changed"
"""A subscription was requested, decided or ended: `{"subscription_id"}`; receivers re-read them."""
POLICY_RELOADED = "policy.reloaded"
"""A replica reloaded its policy set on request: `{"version"}`; receivers reload their files too."""
CATALOG_CHANGED = "catalog.changed"
"""A contract was published (or its status changed): `{"tenant", "api", "version"}`; receivers sync."""
SERVER_CHANGED = "server.changed"
"""A downstream server was added, removed or restarted over REST: `{"name", "action"[, "definition"]}`."""
CIRCUIT_OPENED = "circuit.opened"
"""A backend's circuit opened: `{"backend", "open_ms"}`; receivers fail fast on it too."""
HEALTH_CHANGED = "health.changed"
"""A backend's readiness changed: `{"url", "healthy"}`."""
ROUTING_LEARNED = "routing.learned"
"""A replica saved learned tool co-occurrence: `{}`; receivers load the totals."""
UPSTREAM_GRANTS_REMOVED = "upstream_grants.removed"
"""A person's upstream OAuth grants were deleted: `{"principal"}`; receivers drop its access tokens."""
SECRET_CHANGED = "secret.changed"
"""A stored secret was set, rotated or deleted, or all were re-sealed: `{"name"}` (never a value);
receivers forget the stored secrets they read."""

TOPICS = (
    KEY_CHANGED,
    AGENT_CHANGED,
    SUBSCRIPTION_CHANGED,
    POLICY_RELOADED,
    CATALOG_CHANGED,
    SERVER_CHANGED,
    CIRCUIT_OPENED,
    HEALTH_CHANGED,
    ROUTING_LEARNED,
    UPSTREAM_GRANTS_REMOVED,
    SECRET_CHANGED,
)
