"""`GET /v1/trace-events`: the gateway's last typed trace events, newest first, filtered.

Only an operator reads them (`governance/operators.py` says who that is).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from colonnade.governance.operators import OPERATOR_SCOPE, may_read_trace_events
from colonnade.observability.trace_event_log import TraceEventLog
from colonnade.observability.trace_events import EVENT_KINDS
from colonnade.surfaces.edge import principal_of_scope
from colonnade.surfaces.rest.render import error_response, json_response

__all__ = ["TraceEventRoutes"]

_MAX_LIMIT = 1000


class TraceEventRoutes:
    def __init__(self, events: TraceEventLog | None) -> None:
        self.events = events

    def routes(self) -> list[BaseRoute]:
        return [Route("/v1/trace-events", self.recent, methods=["GET"])]

    async def recent(self, request: Request) -> Response:
        """`?kind=call.ended&trace_id=...&session_id=...&limit=100`"""
        if not may_read_trace_events(principal_of_scope(request.scope)):
            return error_response(
                "A-AUTH-FORBIDDEN",
                f"reading trace events needs the scope {OPERATOR_SCOPE} and no tenant binding",
                403,
            )
        if self.events is None:
            note = "this gateway keeps no trace events: set telemetry.events_keep above 0"
            return json_response({"events": [], "status": None, "note": note})
        query = request.query_params
        kind = query.get("kind")
        if kind is not None and kind not in EVENT_KINDS:
            expected = f"one of: {', '.join(EVENT_KINDS)}"
            return error_response(
                "I-REQ-QUERY",
                f"unknown event kind {kind!r}; {expected}",
                400,
                parameter="kind",
                expected=expected,
            )
        raw_limit = query.get("limit", "100")
        if not raw_limit.isdigit() or not 1 <= int(raw_limit) <= _MAX_LIMIT:
            expected = f"a whole number from 1 to {_MAX_LIMIT}"
            return error_response(
                "I-REQ-QUERY", f"limit must be {expected}", 400, parameter="limit", expected=expected
            )
        found = self.events.recent(
            kind=kind,
            trace_id=query.get("trace_id"),
            session_id=query.get("session_id"),
            limit=int(raw_limit),
        )
        return json_response({"events": [event.to_json() for event in found], "status": self.events.status()})
