"""The adapter registry: one adapter per binding kind, and what every adapter is handed per call.

The execute stage looks up the adapter by the tool's `adapter` kind and hands it an `Invocation`;
an adapter knows how to reach its kind of backend and nothing of governance. It reports what
happened as an `AdapterOutcome`, which the pipeline turns into the call's result.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from colonnade.adapters.outcome import AdapterOutcome
from colonnade.catalog.tool import Tool
from colonnade.governance.principal import Principal

__all__ = ["Adapter", "AdapterRegistry", "Invocation"]


@dataclass(frozen=True, slots=True)
class Invocation:
    """One execution of one tool: what to run, with which arguments, within how long, for whom.

    `idempotency_key` is the backend's form of the caller's key (scoped, opaque), or None;
    `channel` the caller's protocol channel as its surface built it (an MCP `Relay` for a proxied
    call), which only the adapter of that protocol looks at.
    """

    tool: Tool
    arguments: dict[str, Any]
    timeout_s: float
    principal: Principal
    call_id: str
    trace_id: str
    idempotency_key: str | None = None
    channel: object | None = None


class Adapter(Protocol):
    async def execute(self, invocation: Invocation) -> AdapterOutcome: ...

    async def aclose(self) -> None: ...


class AdapterRegistry:
    """Adapters by binding kind (`http`, `builtin`, ...); built once by the composition root."""

    def __init__(self, adapters: Mapping[str, Adapter]) -> None:
        self._adapters = dict(adapters)

    def for_kind(self, kind: str) -> Adapter | None:
        return self._adapters.get(kind)

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(self._adapters)

    async def aclose(self) -> None:
        for adapter in self._adapters.values():
            with contextlib.suppress(Exception):
                await adapter.aclose()
