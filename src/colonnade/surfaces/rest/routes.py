"""The REST surface: calls, the catalog and the envelope schemas as plain JSON over HTTP, under /v1.

`POST /v1/calls` translates a CallRequest body into one `CallService.call` and renders the
CallResult; it holds no governance. Every well-formed envelope gets HTTP 200 whatever its
outcome (the `status` field carries it). A request that never reaches the pipeline still gets
a typed CallResult, with an HTTP status generic clients understand: 400 malformed envelope,
413 body too large, 415 not JSON; the HTTP edge (`surfaces/edge.py`) refuses a foreign Host or
Origin (421/403) before a route runs, and its refusals render here (`render_refusal`) as the
same typed results. Who calls is the principal the edge stored in the request's scope; the
catalog reads show only the tools the gateway's authorizer lets that caller see (a hidden tool
is answered like a missing one).

Answers are in the envelope version the caller chose (body field `envelope_version`, else header
`Colonnade-Envelope-Version`), version 1 when it chose none (docs/rest-api.md).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

from pydantic import BaseModel
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from colonnade.calls.call_errors import error
from colonnade.calls.envelope import CallMetrics, CallRequest, CallResult, EnvelopeVersion
from colonnade.calls.envelope_schemas import CALL_REQUEST, CALL_RESULT, CALL_RESULT_V1, EnvelopeSchema
from colonnade.calls.service import CallService
from colonnade.catalog.catalog import Catalog
from colonnade.catalog.catalog_errors import InvalidCursor
from colonnade.catalog.tool import Tool
from colonnade.governance.authorization import AllowAll, Authorizer, permits, tool_filter
from colonnade.governance.principal import Principal
from colonnade.governance.tool_lookup import AMBIGUOUS_TOOL, AmbiguousName, find_tool, near_names
from colonnade.observability.tracing import caller_trace_fields
from colonnade.routing.router import CallerAllowed
from colonnade.surfaces.edge import DirectKey, EdgeRefusal, principal_of_scope, request_body
from colonnade.surfaces.envelope_parsing import (
    DEFAULT_MAX_BODY_BYTES,
    CommitRequest,
    EnvelopeRejection,
    parse_envelope,
    read_body,
)
from colonnade.surfaces.rest.render import (
    DEFAULT_ENVELOPE_VERSION,
    error_response,
    header_version,
    json_response,
    result_response,
)
from colonnade.surfaces.rest.views import TOOLS_PATH, tool_detail, tool_summary

__all__ = [
    "APPROVAL_TOKEN_HEADER",
    "DEFAULT_PAGE_SIZE",
    "MAX_PAGE_SIZE",
    "SCHEMA_MEDIA_TYPE",
    "RestSurface",
    "render_refusal",
]

logger = logging.getLogger(__name__)

CALLS_PATH = "/v1/calls"
DEFAULT_PAGE_SIZE = 200
APPROVAL_TOKEN_HEADER = "Colonnade-Approval-Token"
"""A REST call may carry its approval token in this header instead of the body's `approval_token`."""
MAX_PAGE_SIZE = 10_000
SCHEMA_MEDIA_TYPE = "application/schema+json"

M = TypeVar("M", bound=BaseModel)


class _PreparedResume(Protocol):
    """`CallService.commit` or `.discard`: what a prepared call's token is resumed with."""

    def __call__(
        self, token: str, *, call_id: str | None = None, principal: Principal | None = None
    ) -> Awaitable[CallResult]: ...


class RestSurface:
    """Build once per gateway; `routes()` goes into the HTTP app next to the MCP endpoint."""

    def __init__(
        self,
        catalog: Catalog,
        calls: CallService,
        *,
        page_size: int = DEFAULT_PAGE_SIZE,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        authorizer: Authorizer | None = None,
    ) -> None:
        if not 1 <= page_size <= MAX_PAGE_SIZE:
            raise ValueError(f"page_size must be between 1 and {MAX_PAGE_SIZE}, got {page_size}")
        if max_body_bytes < 1:
            raise ValueError(f"max_body_bytes must be positive, got {max_body_bytes}")
        self.catalog = catalog
        self.calls = calls
        self.page_size = page_size
        self.max_body_bytes = max_body_bytes
        self.authorizer: Authorizer = authorizer if authorizer is not None else AllowAll()
        self._call_endpoint = _Endpoint(self.post_call)

    def routes(self) -> list[BaseRoute]:
        return [
            Route(CALLS_PATH, self._call_endpoint, methods=["POST"]),
            Route("/v1/calls/commit", self.post_commit, methods=["POST"]),
            Route("/v1/calls/discard", self.post_discard, methods=["POST"]),
            Route(TOOLS_PATH, self.list_tools, methods=["GET"]),
            # `path`: names of tools from other sources may hold `/`
            Route(TOOLS_PATH + "/{name:path}", self.get_tool, methods=["GET"]),
            *(_schema_route(envelope) for envelope in (CALL_REQUEST, CALL_RESULT, CALL_RESULT_V1)),
        ]

    # -- calls ---------------------------------------------------------------------------------

    def direct(self) -> dict[DirectKey, ASGIApp]:
        """What the HTTP edge may serve past the router: `POST /v1/calls`, whose endpoint raises no
        HTTP exceptions and reads no path parameters (every call comes this way)."""
        return {("POST", CALLS_PATH): self._call_endpoint}

    async def post_call(self, scope: Scope, receive: Receive) -> Response:
        """`POST /v1/calls`: a CallRequest in, a CallResult out.

        The body is the one the HTTP edge read and checked for this request, when it fits this
        surface's limit; otherwise (or without the edge) it is read here, with the same checks.
        """
        started = time.perf_counter()
        headers = Headers(scope=scope)
        asked = header_version(headers)
        if isinstance(asked, EnvelopeRejection):
            return _rejected(asked, started, DEFAULT_ENVELOPE_VERSION)
        body = request_body(scope)
        if body is None or len(body) > self.max_body_bytes:
            envelope = await self._envelope(Request(scope, receive), CallRequest)
        else:
            envelope = parse_envelope(body, CallRequest)
        if isinstance(envelope, EnvelopeRejection):
            return _rejected(envelope, started, asked or DEFAULT_ENVELOPE_VERSION)
        version = envelope.envelope_version or asked or DEFAULT_ENVELOPE_VERSION
        header_token = headers.get(APPROVAL_TOKEN_HEADER)
        if header_token and envelope.approval_token is None:
            envelope = envelope.model_copy(update={"approval_token": header_token})
        envelope = _continuing_trace(envelope, headers)
        principal = principal_of_scope(scope)
        outcome = self.calls.call(envelope, principal)
        return await _settled(outcome, envelope.call_id, started, version, envelope.tool_id)

    async def post_commit(self, request: Request) -> Response:
        """`POST /v1/calls/commit`: phase 2 of a two-phase call, `{commit_token, call_id?}` in."""
        return await self._resume_prepared(request, self.calls.commit)

    async def post_discard(self, request: Request) -> Response:
        """`POST /v1/calls/discard`: its owner gives up a prepared call (the compensation runs now)."""
        return await self._resume_prepared(request, self.calls.discard)

    async def _resume_prepared(self, request: Request, resume: _PreparedResume) -> Response:
        """Commit and discard read the same envelope and answer the same way; only the resume differs."""
        started = time.perf_counter()
        asked = header_version(request.headers)
        if isinstance(asked, EnvelopeRejection):
            return _rejected(asked, started, DEFAULT_ENVELOPE_VERSION)
        envelope = await self._envelope(request, CommitRequest)
        if isinstance(envelope, EnvelopeRejection):
            return _rejected(envelope, started, asked or DEFAULT_ENVELOPE_VERSION)
        version = envelope.envelope_version or asked or DEFAULT_ENVELOPE_VERSION
        principal = principal_of_scope(request.scope)
        resumed = resume(envelope.commit_token, call_id=envelope.call_id, principal=principal)
        return await _settled(resumed, envelope.call_id or str(uuid.uuid4()), started, version)

    async def _envelope(self, request: Request, model: type[M]) -> M | EnvelopeRejection:
        """Size, JSON, model: the first check that fails ends the request (the HTTP edge has checked
        the media type, encoding and duplicate keys, the same way as for MCP)."""
        body = await read_body(request, self.max_body_bytes)
        if isinstance(body, EnvelopeRejection):
            return body
        return parse_envelope(body, model)

    # -- catalog -------------------------------------------------------------------------------

    async def list_tools(self, request: Request) -> Response:
        """`GET /v1/tools?cursor=&limit=`: the catalog in canonical-name order, one page at a time."""
        limit = _page_limit(request.query_params.get("limit"), self.page_size)
        if limit is None:
            return error_response(
                "I-REQ-QUERY",
                f"limit must be an integer from 1 to {MAX_PAGE_SIZE} (got {request.query_params['limit']!r})",
                400,
                parameter="limit",
                expected=f"integer 1-{MAX_PAGE_SIZE}",
            )
        include = tool_filter(self.authorizer.listed(principal_of_scope(request.scope)))
        try:
            tools, next_cursor = self.catalog.page(request.query_params.get("cursor") or None, limit, include)
        except InvalidCursor as exc:
            return error_response("I-REQ-CURSOR", exc.message, 400, parameter="cursor")
        return json_response({"tools": [tool_summary(t) for t in tools], "next_cursor": next_cursor})

    async def get_tool(self, request: Request) -> Response:
        """`GET /v1/tools/{name}`: one tool's full definition, by canonical, wire or unambiguous bare name."""
        name = request.path_params["name"]
        principal = principal_of_scope(request.scope)
        found = find_tool(self.catalog, name, self.authorizer, principal)
        if isinstance(found, AmbiguousName):
            return error_response(AMBIGUOUS_TOOL, found.message, 400, **found.details)
        tool = _seen(found, self.authorizer.visible(principal))  # an exact name of a hidden tool, too
        if tool is None:
            near = near_names(self.catalog, name, self.authorizer, principal)
            message = f"no tool named {name!r}"
            return error_response("I-REQ-UNKNOWN-TOOL", message, 404, name=name, did_you_mean=near)
        return json_response(tool_detail(tool))


class _Endpoint:
    """A route's ASGI app without Starlette's per-request wrapping (a Request object, two closures and
    an exception handler that only maps `HTTPException`, which the calls route never raises)."""

    def __init__(self, handle: Callable[[Scope, Receive], Awaitable[Response]]) -> None:
        self.handle = handle

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = await self.handle(scope, receive)
        await response(scope, receive, send)


def _seen(tool: Tool | None, allowed: CallerAllowed) -> Tool | None:
    return tool if tool is not None and permits(allowed, tool.canonical_name) else None


def render_refusal(refusal: EdgeRefusal, scope: Scope) -> Response:
    """An edge refusal under /v1: a typed CallResult for calls, an error body for catalog reads."""
    if scope.get("method") != "POST":
        return error_response(refusal.code, refusal.message, refusal.http_status, **refusal.details)
    rejection = EnvelopeRejection(
        code=refusal.code, message=refusal.message, http_status=refusal.http_status, details=refusal.details
    )
    asked = header_version(Headers(scope=scope))
    version = asked if isinstance(asked, int) else DEFAULT_ENVELOPE_VERSION
    return result_response(rejection.result(), refusal.http_status, version=version)


def _rejected(rejection: EnvelopeRejection, started: float, version: EnvelopeVersion) -> Response:
    """A request that never reached the pipeline, as a typed result in the version it asked for."""
    return result_response(rejection.result(_ms_since(started)), rejection.http_status, version=version)


def _schema_route(envelope: EnvelopeSchema) -> Route:
    """`GET /v1/schemas/<name>.json`: the checked-in file byte for byte, read once when routes are built."""
    content = envelope.path.read_bytes()

    async def schema(_: Request) -> Response:
        return Response(content, media_type=SCHEMA_MEDIA_TYPE)

    return Route(f"/v1/schemas/{envelope.name}.json", schema, methods=["GET"])


async def _settled(
    outcome: Awaitable[CallResult], call_id: str, started: float, version: EnvelopeVersion, tool_id: str = ""
) -> Response:
    """The service promises never to raise; should it break that promise, the caller still gets a type."""
    try:
        result = await outcome
    except Exception:
        logger.exception("call %s failed inside the gateway", call_id)
        return result_response(_internal_fault(call_id, started), 500, version=version, tool_id=tool_id)
    return result_response(result, version=version, tool_id=tool_id)


def _page_limit(raw: str | None, default: int) -> int | None:
    if raw is None or raw == "":
        return default
    if not (raw.isascii() and raw.isdigit()) or not 1 <= int(raw) <= MAX_PAGE_SIZE:
        return None
    return int(raw)


def _internal_fault(call_id: str, started: float) -> CallResult:
    status, err = error("S-TOOL-INTERNAL", "the gateway failed while running the call; it has been logged")
    metrics = CallMetrics(duration_ms=_ms_since(started))
    return CallResult(call_id=call_id, status=status, error=err, metrics=metrics)


def _ms_since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)


def _continuing_trace(envelope: CallRequest, headers: Headers) -> CallRequest:
    """The call in the caller's trace when it sent a W3C `traceparent` header and its body names no
    parent span of its own."""
    if envelope.context.parent_span_id is not None:
        return envelope
    traced = caller_trace_fields(headers.get("traceparent"), headers.get("tracestate"))
    if not traced:
        return envelope
    return envelope.model_copy(update={"context": envelope.context.model_copy(update=traced)})
