"""Routed `tools/list`: a client that opts in sees the top-k tools for its conversation.

A client opts in by sending `_meta["colonnade/routing"]` (a `query` or recent `messages`, with
optional `domain_hints`, `k` and a `session` id) on `tools/list` or `tools/call`. The context is
remembered per session (the connection for handshake-era clients, or the `session` id), so a later
plain `tools/list` is routed too, and a call that moves the context (new messages, a tool used)
changes the selection, which the surface then announces as a tool-list change.
"""

from __future__ import annotations

import threading
import uuid
import weakref
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp.server.context import ServerRequestContext
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from colonnade.catalog.catalog import Catalog
from colonnade.catalog.tool import Tool
from colonnade.config import RoutingSettings
from colonnade.errors import ColonnadeError
from colonnade.governance.authorization import permits
from colonnade.routing.context import RoutingContext
from colonnade.routing.learning import CallFeedback
from colonnade.routing.router import Router, RoutingDecision
from colonnade.surfaces.mcp.announcer import connection_of
from colonnade.surfaces.mcp.caller import CallerScope, everything

__all__ = ["ROUTING_META_KEY", "DynamicToolList", "RoutingMetaError", "RoutingRequest"]

ROUTING_META_KEY = "colonnade/routing"
_MAX_SESSIONS = 10_000


class RoutingMetaError(ColonnadeError, ValueError):
    """`_meta["colonnade/routing"]` is malformed; the message says which field and what it takes."""

    code = "I-REQ-ROUTING-META"


@dataclass(frozen=True, slots=True)
class RoutingRequest:
    """What a client sent under `_meta["colonnade/routing"]`."""

    context: RoutingContext | None = None
    domain_hints: tuple[str, ...] = ()
    k: int | None = None
    session: str | None = None

    @classmethod
    def from_meta(cls, meta: Mapping[str, Any] | None) -> RoutingRequest | None:
        """None when the request does not carry the key; RoutingMetaError when it is malformed."""
        if not meta or ROUTING_META_KEY not in meta:
            return None
        raw = meta[ROUTING_META_KEY]
        where = f'_meta["{ROUTING_META_KEY}"]'
        if not isinstance(raw, Mapping):
            raise RoutingMetaError(f'{where} must be an object like {{"query": "..."}}')
        unknown = sorted(set(raw) - {"query", "messages", "domain_hints", "k", "session"})
        if unknown:
            raise RoutingMetaError(
                f"{where} has unknown field(s) {unknown}; use query, messages, domain_hints, k, session"
            )
        return cls(
            context=_context(raw, where),
            domain_hints=_strings(raw.get("domain_hints", []), f"{where}.domain_hints"),
            k=_k(raw.get("k"), f"{where}.k"),
            session=_session(raw.get("session"), f"{where}.session"),
        )


@dataclass(slots=True)
class _SessionState:
    context: RoutingContext
    domain_hints: tuple[str, ...] = ()
    k: int | None = None
    listed: frozenset[str] = field(default_factory=frozenset)


class DynamicToolList:
    """Decides, per request, whether `tools/list` is routed, and what it then shows."""

    def __init__(
        self,
        catalog: Catalog,
        router: Router,
        settings: RoutingSettings,
        *,
        feedback: CallFeedback | None = None,
        scope: CallerScope = everything,
    ) -> None:
        self.catalog = catalog
        self.router = router
        self.settings = settings
        self.feedback = feedback
        self.scope = scope
        self._states: OrderedDict[str, _SessionState] = OrderedDict()
        self._connections: weakref.WeakKeyDictionary[object, str] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def listing(
        self, ctx: ServerRequestContext[Any, Any], request: RoutingRequest | None
    ) -> list[Tool] | None:
        """The routed tools for this request, or None when the client has not opted in."""
        key = self.session_key(ctx, request)
        state = self._update(key, request)
        if state is None:
            return None
        decision = self._route(ctx, key, state)
        state.listed = frozenset(decision.selected)
        return self._tools(ctx, decision)

    def after_call(
        self, ctx: ServerRequestContext[Any, Any], request: RoutingRequest | None, tool: Tool | None, ok: bool
    ) -> bool:
        """Learn from a finished call and move the session's context; True when its list changed."""
        key = self.session_key(ctx, request)
        if ok and tool is not None and self.feedback is not None:
            self.feedback.after_success(key, tool.canonical_name)
        state = self._update(key, request)
        if state is None or key is None:
            return False
        selected = frozenset(self._route(ctx, key, state).selected)
        if selected == state.listed:
            return False
        state.listed = selected
        return True

    def session_key(self, ctx: ServerRequestContext[Any, Any], request: RoutingRequest | None) -> str | None:
        """The client's `session` id, else its handshake-era connection; None for a stateless call."""
        if request is not None and request.session is not None:
            return f"session:{request.session}"
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS or ctx.session is None:
            return None
        connection = connection_of(ctx.session)
        with self._lock:
            key = self._connections.get(connection)
            if key is None:
                key = self._connections[connection] = f"connection:{uuid.uuid4().hex}"
        return key

    def _update(self, key: str | None, request: RoutingRequest | None) -> _SessionState | None:
        """The session's routing state after this request (a new context replaces the old one)."""
        with self._lock:
            state = self._states.get(key) if key is not None else None
            if request is not None and request.context is not None:
                listed = state.listed if state is not None else frozenset()
                state = _SessionState(request.context, request.domain_hints, request.k, listed)
            elif state is not None and request is not None:
                state.domain_hints = request.domain_hints or state.domain_hints
                state.k = request.k or state.k
            if key is not None and state is not None:
                self._states[key] = state
                self._states.move_to_end(key)
                while len(self._states) > _MAX_SESSIONS:
                    self._states.popitem(last=False)
        return state

    def _route(
        self, ctx: ServerRequestContext[Any, Any], key: str | None, state: _SessionState
    ) -> RoutingDecision:
        session_tools = self.feedback.session_tools(key) if self.feedback is not None else ()
        return self.router.route(
            state.context,
            caller_allowed=self.scope(ctx),
            domain_hints=state.domain_hints,
            session_tools=session_tools,
            k=state.k or self.settings.top_k,
        )

    def _tools(self, ctx: ServerRequestContext[Any, Any], decision: RoutingDecision) -> list[Tool]:
        """Always-on tools first, then the selection; only tools the caller may call."""
        allowed = self.scope(ctx)
        shown: dict[str, Tool] = {}
        for name in [*self.settings.always_on_tools, *decision.selected]:
            tool = self.catalog.get(name)
            if tool is not None and permits(allowed, tool.canonical_name):
                shown.setdefault(tool.canonical_name, tool)
        return list(shown.values())


def _context(raw: Mapping[str, Any], where: str) -> RoutingContext | None:
    query, messages = raw.get("query"), raw.get("messages")
    if query is not None and messages is not None:
        raise RoutingMetaError(f"{where}: give either query or messages, not both")
    if query is not None:
        if not isinstance(query, str) or not query.strip():
            raise RoutingMetaError(f"{where}.query must be a non-empty string")
        return query
    if messages is None:
        return None
    if not isinstance(messages, list) or not all(
        isinstance(m, Mapping) and isinstance(m.get("role"), str) and "content" in m for m in messages
    ):
        raise RoutingMetaError(f'{where}.messages must be a list of {{"role": ..., "content": ...}} objects')
    return list(messages)


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise RoutingMetaError(f"{where} must be a list of strings")
    return tuple(value)


def _k(value: Any, where: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 200:
        raise RoutingMetaError(f"{where} must be an integer from 1 to 200")
    return value


def _session(value: Any, where: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not 1 <= len(value) <= 200:
        raise RoutingMetaError(f"{where} must be a string of 1 to 200 characters")
    return value
