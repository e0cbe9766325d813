"""The HTTP edge: what every HTTP route needs, done once, in front of every surface.

One ASGI middleware checks, in order: the Host and Origin headers (DNS-rebinding protection; on
every bind, with the loopback names plus the configured public names allowed), the request's
size (`server.max_request_bytes`: a declared Content-Length over it is answered 413 at once, before
any of the body is read; a chunked body is counted while it streams),
and who calls (the `Principal` the authenticator finds, stored in the ASGI scope for the
surfaces to read, and in a context variable for code that gets no request, such as the MCP
SDK's pre-dispatch header check). A refused request never reaches a surface; each surface
renders refusals in its own format (a typed JSON result for REST, a page for people, the SDK's
plain text for MCP), chosen by path prefix. `/healthz` and `/readyz` stay open to probes, and so
do the paths the app adds as open (the protected resource metadata).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from contextvars import ContextVar
from typing import Any

from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from colonnade.governance.principal import ANONYMOUS_LOOPBACK, Principal
from colonnade.surfaces.edge_refusal import EdgeRefusal
from colonnade.surfaces.json_input import checked_json, media_type_refusal

__all__ = [
    "DEFAULT_MAX_REQUEST_BYTES",
    "OPEN_PATHS",
    "PRINCIPAL_KEY",
    "REQUEST_BODY_KEY",
    "REQUEST_DOCUMENT_KEY",
    "DirectKey",
    "DirectMatch",
    "EdgeRefusal",
    "HttpEdge",
    "OriginPolicy",
    "RefusalRenderer",
    "current_caller",
    "principal_of_scope",
    "request_body",
    "request_document",
]

DEFAULT_MAX_REQUEST_BYTES = 1024 * 1024
OPEN_PATHS = frozenset({"/healthz", "/readyz"})
PRINCIPAL_KEY = "colonnade.principal"
REQUEST_BODY_KEY = "colonnade.request_body"
"""In `scope["state"]`: a JSON request's checked body, for a surface that must look at it before the
framework reads it (the MCP session manager, to see what an opening `initialize` declares)."""
REQUEST_DOCUMENT_KEY = "colonnade.request_document"
"""In `scope["state"]`: that body's JSON value, parsed once by the edge's duplicate-key check."""


def request_body(scope: Mapping[str, Any]) -> bytes | None:
    """The JSON body the edge read and checked for this request, if it did (None otherwise)."""
    state = scope.get("state")
    body = state.get(REQUEST_BODY_KEY) if isinstance(state, Mapping) else None
    return bytes(body) if isinstance(body, bytes | bytearray) else None


def request_document(scope: Mapping[str, Any]) -> Any:
    """The JSON value of that body, as the edge parsed it to check it (None if it is not JSON, or if
    the edge read no body). Shared, not copied: read it, do not change it."""
    state = scope.get("state")
    return state.get(REQUEST_DOCUMENT_KEY) if isinstance(state, Mapping) else None


_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
_DRAIN_CAP_BYTES = 16 * 1024 * 1024
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


DirectKey = str | tuple[str, str]
"""A path the edge serves past the router: every method of it, or (method, path)."""
DirectMatch = Callable[[str], ASGIApp | None]
"""The app that serves a family of paths past the router: the one for a path, or None."""
RefusalRenderer = Callable[[EdgeRefusal, Scope], Response]
"""A surface's rendering of a refusal of one of its requests (the scope says which)."""
Authenticator = Callable[[Headers, Scope], Awaitable[Principal | EdgeRefusal]]


_CALLER: ContextVar[Principal | None] = ContextVar("colonnade_edge_caller", default=None)


def current_caller() -> Principal | None:
    """The principal of the HTTP request being served in this task; None outside the HTTP edge."""
    return _CALLER.get()


def principal_of_scope(scope: Mapping[str, Any], default: Principal = ANONYMOUS_LOOPBACK) -> Principal:
    """The principal the edge stored for this request (the default outside the HTTP edge)."""
    state = scope.get("state")
    principal = state.get(PRINCIPAL_KEY) if isinstance(state, Mapping) else None
    return principal if isinstance(principal, Principal) else default


class OriginPolicy:
    """Which Host and Origin values the gateway answers: `name` or `name:*` (any port) entries."""

    def __init__(self, hosts: Sequence[str], origins: Sequence[str]) -> None:
        self.hosts = tuple(hosts)
        self.origins = tuple(origins)

    @classmethod
    def for_bind(
        cls, host: str, extra_hosts: Iterable[str] = (), extra_origins: Iterable[str] = ()
    ) -> OriginPolicy:
        """The loopback names (and a loopback address actually bound), plus configured public names."""
        names = list(_LOOPBACK_NAMES)
        if _is_loopback(host):
            names.insert(0, f"[{host}]" if ":" in host else host)
        names = list(dict.fromkeys(names))
        hosts = [f"{name}:*" for name in names] + list(extra_hosts)
        origins = [f"http://{name}:*" for name in names] + list(extra_origins)
        return cls(hosts, origins)

    def refusal(self, headers: Headers) -> EdgeRefusal | None:
        host = headers.get("host")
        if not host or not _matches(host, self.hosts):
            value = host or ""
            return EdgeRefusal(
                "A-AUTH-ORIGIN",
                f"the Host header {value!r} is not allowed for this gateway",
                421,
                {"header": "host"},
            )
        origin = headers.get("origin")
        if origin and not _matches(origin, self.origins):
            return EdgeRefusal(
                "A-AUTH-ORIGIN",
                f"the Origin header {origin!r} is not allowed for this gateway",
                403,
                {"header": "origin"},
            )
        return None


async def _anonymous(headers: Headers, scope: Scope) -> Principal | EdgeRefusal:
    return ANONYMOUS_LOOPBACK


class HttpEdge:
    """ASGI middleware in front of every route; `renderers` maps a path prefix to its refusal format."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        origins: OriginPolicy,
        renderers: Mapping[str, RefusalRenderer] | None = None,
        max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
        authenticate: Authenticator = _anonymous,
        open_paths: frozenset[str] = OPEN_PATHS,
        json_prefixes: Sequence[str] = (),
        direct: Mapping[DirectKey, ASGIApp] | None = None,
        direct_match: DirectMatch | None = None,
    ) -> None:
        """`direct` maps exact paths (every method), or (method, path) pairs, to the app that serves
        them, handed the request past the framework's exception middleware and router (about 20 us a
        request): for apps that raise no HTTP exceptions and read no path parameters, such as the MCP
        SDK's transport at /mcp and the REST surface's `POST /v1/calls`. Other methods of a path
        given with one still meet the router (and its 405). `direct_match` does the same for a
        family of paths: the app for a path, or None (the router then has it), such as the
        per-server endpoints' `/servers/{name}/mcp`."""
        self.app = app
        self.direct: dict[DirectKey, ASGIApp] = dict(direct or {})
        self.direct_match = direct_match
        self.origins = origins
        # Longest prefix first, so `/v1/calls` may render differently from `/v1` if it ever needs to.
        self.renderers = sorted((renderers or {}).items(), key=lambda item: -len(item[0]))
        self.max_request_bytes = max_request_bytes
        self.authenticate = authenticate
        self.open_paths = open_paths
        self.json_prefixes = tuple(json_prefixes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in self.open_paths:
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        refusal = self.origins.refusal(headers) or self._declared_too_large(headers)
        if refusal is None:
            who = await self.authenticate(headers, scope)
            if isinstance(who, EdgeRefusal):
                refusal = who
            else:
                scope.setdefault("state", {})[PRINCIPAL_KEY] = who
        if refusal is not None:
            # Answered at once, before any body is read: a declared size over the limit needs no
            # body to refuse, and a client that waits for the answer before sending (or never sends)
            # must not wait out the body deadline. The server reads and drops whatever body still
            # comes on this connection, so a client that does send it hears the answer too.
            await self._render(scope, refusal)(scope, _disconnected, send)
            return
        caller = _CALLER.set(principal_of_scope(scope))
        app = self._app_for(scope)
        try:
            if scope.get("method") not in _BODY_METHODS:
                await app(scope, receive, send)
            elif _under(scope["path"], self.json_prefixes):
                await self._json_request(app, scope, headers, receive, send)
            elif headers.get("content-length") is None:
                await _BodyLimit(self, app, scope, receive, send).run()
            else:
                await app(scope, receive, send)
        finally:
            _CALLER.reset(caller)

    def _app_for(self, scope: Scope) -> ASGIApp:
        path = scope["path"]
        if self.direct:
            app = self.direct.get(path)
            if app is None:
                app = self.direct.get((scope.get("method", ""), path))
            if app is not None:
                return app
        matched = self.direct_match(path) if self.direct_match is not None else None
        return matched if matched is not None else self.app

    async def _json_request(
        self, app: ASGIApp, scope: Scope, headers: Headers, receive: Receive, send: Send
    ) -> None:
        """A JSON API request: its media type, size and body checked once here (`json_input.py`),
        then the app reads the (possibly normalised) body as if from the client."""
        declared = headers.get("content-length")
        has_body = declared not in (None, "0") or "transfer-encoding" in headers
        refusal = media_type_refusal(headers.get("content-type")) if has_body else None
        if refusal is not None:
            await _drain(receive)
            await self._render(scope, refusal)(scope, _disconnected, send)
            return
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away mid-body: nobody is left to answer
            body += message.get("body", b"")
            if len(body) > self.max_request_bytes:
                if message.get("more_body", False):
                    await _drain(receive)
                await self._render(scope, self.too_large())(scope, _disconnected, send)
                return
            if not message.get("more_body", False):
                break
        checked, document, refusal = checked_json(bytes(body))
        if refusal is not None:
            await self._render(scope, refusal)(scope, _disconnected, send)
            return
        if len(checked) != len(body):
            scope = _with_content_length(scope, len(checked))
        state = scope.setdefault("state", {})
        state[REQUEST_BODY_KEY] = checked
        state[REQUEST_DOCUMENT_KEY] = document
        await app(scope, _replay(checked, receive), send)

    def _declared_too_large(self, headers: Headers) -> EdgeRefusal | None:
        declared = headers.get("content-length")
        if declared is None:
            return None
        try:
            size = int(declared)
        except ValueError:
            return EdgeRefusal(
                "I-REQ-ENVELOPE", f"the Content-Length header {declared[:40]!r} is not a number", 400
            )
        return self.too_large(size) if size > self.max_request_bytes else None

    def too_large(self, declared: int | None = None) -> EdgeRefusal:
        limit = self.max_request_bytes
        size = f"{declared} bytes" if declared is not None else "more than that"
        return EdgeRefusal(
            "I-REQ-TOO-LARGE",
            f"the request body is larger than the limit of {limit} bytes (got {size})",
            413,
            {"limit_bytes": limit},
        )

    def _render(self, scope: Scope, refusal: EdgeRefusal) -> Response:
        path: str = scope["path"]
        for prefix, render in self.renderers:
            if _under(path, (prefix,)):
                response = render(refusal, scope)
                break
        else:
            response = PlainTextResponse(refusal.message + "\n", status_code=refusal.http_status)
        response.headers.update(refusal.headers)
        return response


class _BodyLimit:
    """A streamed body without Content-Length: counted as it arrives, refused once over the limit.

    On refusal the edge answers 413 itself and cancels the app, which is still waiting for its
    body: the app never sees a truncated body (which might parse) and never answers twice.
    """

    def __init__(self, edge: HttpEdge, app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> None:
        self.edge, self.app, self.scope, self._receive, self._send = edge, app, scope, receive, send
        self.received = 0
        self.started = False
        self.refused = asyncio.Event()

    async def run(self) -> None:
        app = asyncio.ensure_future(self.app(self.scope, self.receive, self.send))
        refused = asyncio.ensure_future(self.refused.wait())
        try:
            await asyncio.wait({app, refused}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            refused.cancel()
        if not app.done():
            app.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await app
        else:
            app.result()  # the app's own exceptions surface as they would without the edge

    async def receive(self) -> Message:
        message = await self._receive()
        if message["type"] == "http.request":
            self.received += len(message.get("body", b""))
            if self.received > self.edge.max_request_bytes:
                if message.get("more_body", False):
                    await _drain(self._receive)
                if not self.started:
                    response = self.edge._render(self.scope, self.edge.too_large())
                    await response(self.scope, _disconnected, self._send)
                self.refused.set()
                await asyncio.Event().wait()  # cancelled by `run`
        return message

    async def send(self, message: Message) -> None:
        self.started = True
        await self._send(message)


async def _disconnected() -> Message:
    return {"type": "http.disconnect"}


async def _drain(receive: Receive, cap: int = _DRAIN_CAP_BYTES) -> None:
    """Read and drop the rest of a refused body, so the client hears the refusal instead of a reset.

    A client still writing its body when the server closes the connection gets a TCP reset and
    never reads the 413; past `cap` bytes the connection is closed anyway.
    """
    drained = 0
    while drained < cap:
        message = await receive()
        if message["type"] != "http.request":
            return
        drained += len(message.get("body", b""))
        if not message.get("more_body", False):
            return


def _under(path: str, prefixes: Sequence[str]) -> bool:
    return any(path == prefix or path.startswith(prefix.rstrip("/") + "/") for prefix in prefixes)


def _replay(body: bytes, receive: Receive) -> Receive:
    """The body the edge read, once; then the client's own messages (e.g. its disconnect)."""
    pending = [{"type": "http.request", "body": body, "more_body": False}]

    async def replayed() -> Message:
        return pending.pop() if pending else await receive()

    return replayed


def _with_content_length(scope: Scope, length: int) -> Scope:
    headers = [(k, v) for k, v in scope["headers"] if k.lower() != b"content-length"]
    return {**scope, "headers": [*headers, (b"content-length", str(length).encode())]}


def _matches(value: str, allowed: Sequence[str]) -> bool:
    return any(value == entry or (entry.endswith(":*") and value.startswith(entry[:-1])) for entry in allowed)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
