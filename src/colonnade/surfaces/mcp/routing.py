"""Routed `tools/list`: a client that opts in sees the top-k tools for its conversation.

A client opts in by sending `_meta["colonnade/routing"]` (a `query` or recent `messages`, with
optional `domain_hints`, `k` and a `session` id) on `tools/list` or `tools/call`. The context is
remembered per session (the `session` id, else the handshake-era `Mcp-Session-Id`, else the
connection), so a later plain `tools/list` is routed too, and a call that moves the context (new
messages, a tool used) changes the selection, which the surface then announces as a tool-list change.

With shared values (Redis, several replicas) each opted-in session's state (context, hints, k, what
was listed, its recent tools) is kept there under its session key with `routing.session_ttl_s` as
expiry, read at each of its requests and written after: a session continued on another replica
keeps its context. This process keeps a copy, used while Redis is unreachable. A call that carries
no routing `_meta` reads the shared state only for a session this replica has routed before, so
the calls of sessions that never opted in cost no Redis round trip.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import threading
import uuid
import weakref
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson
from mcp.server.context import ServerRequestContext
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from colonnade.catalog.catalog import Catalog
from colonnade.catalog.tool import Tool
from colonnade.config import RoutingSettings
from colonnade.errors import ColonnadeError
from colonnade.governance.authorization import permits
from colonnade.governance.principal import Principal
from colonnade.observability.routing_turns import RoutingTurns
from colonnade.routing.context import Message, RoutingContext
from colonnade.routing.learning import CallFeedback
from colonnade.routing.router import Router, RoutingDecision
from colonnade.shared_state import SharedStateUnavailable, SharedValues
from colonnade.surfaces.mcp.announcer import connection_of
from colonnade.surfaces.mcp.caller import CallerScope, everything

__all__ = ["ROUTING_META_KEY", "DynamicToolList", "RoutingMetaError", "RoutingRequest"]

logger = logging.getLogger(__name__)

ROUTING_META_KEY = "colonnade/routing"
_MAX_SESSIONS = 10_000
_RECORD_PREFIX = "routing-session:"


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
        values: SharedValues | None = None,
        caller: Callable[[ServerRequestContext[Any, Any]], str] | None = None,
        turns: RoutingTurns | None = None,
        principal: Callable[[ServerRequestContext[Any, Any]], Principal] | None = None,
    ) -> None:
        self.catalog = catalog
        self.router = router
        self.settings = settings
        self.feedback = feedback
        self.scope = scope
        self.values = values
        """Where sessions are shared between replicas; None: this process only."""
        self.caller = caller
        """Who calls (a principal key): a `session` id names a session of its caller only, so one
        caller cannot read or steer another's context by sending the same id."""
        self.turns = turns
        """Where each routed listing and the calls after it are recorded (the routing page, export)."""
        self.principal = principal
        self._states: OrderedDict[str, _SessionState] = OrderedDict()
        self._connections: weakref.WeakKeyDictionary[object, str] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    async def listing(
        self, ctx: ServerRequestContext[Any, Any], request: RoutingRequest | None
    ) -> list[Tool] | None:
        """The routed tools for this request, or None when the client has not opted in."""
        key = self.session_key(ctx, request)
        state = _updated(await self._state(key), request)
        if state is None:
            return None
        decision = self._route(ctx, key, state)
        state.listed = frozenset(decision.selected)
        await self._keep(key, state)
        tools = self._tools(ctx, decision)
        if self.turns is not None and key is not None:
            who = self.principal(ctx) if self.principal is not None else None
            self.turns.listed(
                key,
                consumer=who.key if who is not None else None,
                tenant=who.tenant if who is not None else None,
                query=decision.query_used,
                shown=tuple(tool.canonical_name for tool in tools),
                confidence=decision.confidence,
                fallback=decision.fallback_used,
            )
        return tools

    async def after_call(
        self, ctx: ServerRequestContext[Any, Any], request: RoutingRequest | None, tool: Tool | None, ok: bool
    ) -> bool:
        """Learn from a finished call and move the session's context; True when its list changed."""
        key = self.session_key(ctx, request)
        kept = await self._state(key, plain_call=request is None)
        if ok and tool is not None and self.feedback is not None:
            self.feedback.after_success(key, tool.canonical_name)
        if tool is not None and key is not None and self.turns is not None:
            self.turns.called(key, tool.canonical_name, ok)
        state = _updated(kept, request)
        if state is None or key is None:
            return False
        selected = frozenset(self._route(ctx, key, state).selected)
        changed = selected != state.listed
        state.listed = selected
        if changed or state is not kept or ok:
            await self._keep(key, state)
        return changed

    def session_key(self, ctx: ServerRequestContext[Any, Any], request: RoutingRequest | None) -> str | None:
        """The client's `session` id, else its handshake-era session (its `Mcp-Session-Id` when it has
        one, which any replica can serve, or its connection); None for a stateless call."""
        if request is not None and request.session is not None:
            owner = self.caller(ctx) if self.caller is not None else None
            return f"session:{owner}:{request.session}" if owner else f"session:{request.session}"
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS or ctx.session is None:
            return None
        headers = getattr(ctx.request, "headers", None)
        mcp_session = headers.get("mcp-session-id") if headers is not None else None
        if isinstance(mcp_session, str) and mcp_session:
            return f"mcp:{mcp_session}"
        connection = connection_of(ctx.session)
        with self._lock:
            key = self._connections.get(connection)
            if key is None:
                key = self._connections[connection] = f"connection:{uuid.uuid4().hex}"
        return key

    async def _state(self, key: str | None, *, plain_call: bool = False) -> _SessionState | None:
        """The session's state as last kept: shared when replicas share, else (or meanwhile) here.

        A call without routing `_meta` of a session this replica never routed reads nothing shared:
        the plain calls of sessions that never opted in must not pay a Redis round trip each."""
        if key is None:
            return None
        with self._lock:
            local = self._states.get(key)
        if self.values is None or (plain_call and local is None):
            return local
        try:
            record = await self.values.get(_record_key(key))
        except SharedStateUnavailable:
            return local
        shared = _decoded(record) if record is not None else None
        if shared is None:
            return local
        state, trail = shared
        if self.feedback is not None and trail != self.feedback.session_tools(key):
            self.feedback.trails.restore(key, trail)  # the session's recent calls ran elsewhere
        return state

    async def _keep(self, key: str | None, state: _SessionState) -> None:
        if key is None:
            return
        with self._lock:
            self._states[key] = state
            self._states.move_to_end(key)
            while len(self._states) > _MAX_SESSIONS:
                self._states.popitem(last=False)
        if self.values is None:
            return
        trail = self.feedback.session_tools(key) if self.feedback is not None else ()
        record = _encoded(state, trail)
        if record is None:
            return
        with contextlib.suppress(SharedStateUnavailable):  # kept here; the link logs its state once
            await self.values.set(_record_key(key), record, ttl_s=self.settings.session_ttl_s)

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


def _updated(state: _SessionState | None, request: RoutingRequest | None) -> _SessionState | None:
    """The session's routing state after this request (a new context replaces the old one)."""
    if request is not None and request.context is not None:
        listed = state.listed if state is not None else frozenset()
        return _SessionState(request.context, request.domain_hints, request.k, listed)
    if state is not None and request is not None:
        return _SessionState(
            state.context, request.domain_hints or state.domain_hints, request.k or state.k, state.listed
        )
    return state


def _record_key(key: str) -> str:
    return _RECORD_PREFIX + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def _encoded(state: _SessionState, trail: tuple[str, ...]) -> bytes | None:
    context: Any = state.context
    if not isinstance(context, str):
        context = [
            {"role": turn.role, "content": turn.content} if isinstance(turn, Message) else dict(turn)
            for turn in context
        ]
    try:
        return orjson.dumps(
            {
                "context": context,
                "domain_hints": list(state.domain_hints),
                "k": state.k,
                "listed": sorted(state.listed),
                "trail": list(trail),
            }
        )
    except TypeError:  # a context given in-process with values JSON cannot carry: kept here only
        return None


def _decoded(record: bytes) -> tuple[_SessionState, tuple[str, ...]] | None:
    try:
        fields = orjson.loads(record)
        context = fields["context"]
        if not isinstance(context, (str, list)):
            raise TypeError("context")
        state = _SessionState(
            context,
            tuple(str(hint) for hint in fields["domain_hints"]),
            int(fields["k"]) if fields["k"] is not None else None,
            frozenset(str(name) for name in fields["listed"]),
        )
        return state, tuple(str(name) for name in fields["trail"])
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        logger.warning("a shared routing session record could not be read; this replica's copy is used")
        return None


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
