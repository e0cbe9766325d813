"""The `builtin` adapter: runs the gateway's own tools by the handler their binding names.

Handlers are registered by the composition root, so a built-in tool whose work belongs to a
higher layer (committing a parked call runs the pipeline again) is still executed here, through
the pipeline, without this module knowing the pipeline.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from colonnade.adapters.outcome import MISCONFIGURED, AdapterOutcome, OutcomeKind
from colonnade.adapters.registry import Invocation
from colonnade.catalog.bindings import BuiltinBinding

__all__ = ["BuiltinAdapter", "BuiltinHandler"]

BuiltinHandler = Callable[[Invocation], Awaitable[AdapterOutcome]]


class BuiltinAdapter:
    def __init__(self, handlers: dict[str, BuiltinHandler] | None = None) -> None:
        self._handlers: dict[str, BuiltinHandler] = dict(handlers or {})

    def register(self, name: str, handler: BuiltinHandler) -> None:
        self._handlers[name] = handler

    async def execute(self, invocation: Invocation) -> AdapterOutcome:
        binding = invocation.tool.binding
        handler = self._handlers.get(binding.name) if isinstance(binding, BuiltinBinding) else None
        if handler is None:
            return AdapterOutcome(
                OutcomeKind.TERMINAL_ERROR,
                error_code=MISCONFIGURED,
                message=f"'{invocation.tool.canonical_name}' has no built-in handler in this gateway",
            )
        return await handler(invocation)

    async def aclose(self) -> None:
        return None
