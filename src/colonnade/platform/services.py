"""What the core tools work with: the gateway's parts, given by the composition root as values.

Each part a gateway may lack (no database: no contract store, audit log, keys or subscriptions)
is None here, and the tool that needs it says so (`need`) instead of failing with a traceback.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from colonnade.catalog.builtins import BuiltinTools
from colonnade.catalog.catalog import Catalog
from colonnade.config import Settings
from colonnade.governance.agent_admin import AgentAdmin
from colonnade.governance.audit import AuditLog
from colonnade.governance.authorization import Authorizer
from colonnade.governance.key_admin import KeyAdmin
from colonnade.governance.subscriptions import SubscriptionAdmin
from colonnade.observability.metrics import GatewayMetrics
from colonnade.platform.changes import ResourceChanges
from colonnade.platform.refusal import PlatformRefusal
from colonnade.store.alerts_repo import AlertRecord
from colonnade.store.contracts_repo import ContractStore
from colonnade.store.error_snapshots_repo import ErrorSnapshotStore
from colonnade.store.metrics_history_repo import MetricsHistoryStore

__all__ = ["AlertsView", "PlatformServices", "need"]

T = TypeVar("T")


class AlertsView(Protocol):
    async def evaluate(self) -> list[AlertRecord]: ...


@dataclass(frozen=True, slots=True)
class PlatformServices:
    settings: Settings
    catalog: Catalog
    authorizer: Authorizer
    """The gateway's authorizer (core tools included): what a listing may show a caller."""
    builtins: BuiltinTools
    metrics: GatewayMetrics
    status: Callable[[], Awaitable[dict[str, Any]]]
    """The gateway's `status()`: catalog, servers, policy, shared state, readiness checks."""
    contracts: ContractStore | None = None
    refresh: Callable[[], Awaitable[object]] | None = None
    """The catalog catches up with the store (`CatalogSync.refresh`) after a core tool changed it."""
    audit: AuditLog | None = None
    keys: KeyAdmin | None = None
    agents: AgentAdmin | None = None
    subscriptions: SubscriptionAdmin | None = None
    changes: ResourceChanges | None = None
    """Where the core tools say which `colonnade://` resources a write changed."""
    snapshots: ErrorSnapshotStore | None = None
    """Failed calls as answered (envelope, redacted arguments), written by the audit stage."""
    alerts: AlertsView | None = None
    """The gateway's alert rules (`alerts.py`), evaluated on demand and in the background."""
    history: MetricsHistoryStore | None = None
    """The rolled-up metrics history (per tool and API, minute and five-minute buckets)."""


def need(part: T | None, what: str) -> T:
    """The part a tool needs, or a refusal saying which part this gateway does not run."""
    if part is None:
        raise PlatformRefusal(
            "S-TOOL-PLATFORM-PART",
            f"this gateway runs without {what} (it has no database): start it with a database to use "
            f"this tool",
        )
    return part
