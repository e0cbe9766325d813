"""Observability: the gateway's own call figures (per tool, as `/metrics` has them) and its failed
calls as the audit log recorded them, listed, explained and grouped by code, tool and cause."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from colonnade.calls.call_errors import REGISTRY
from colonnade.governance.audit.readers import StoredAudit
from colonnade.governance.authorization import permits
from colonnade.governance.personas import Scope
from colonnade.governance.principal import Principal
from colonnade.governance.refusals import UnknownResource
from colonnade.governance.stewards import in_reach
from colonnade.platform.core_tool import CoreTool
from colonnade.platform.error_records import LOG_SCOPES, failed_calls
from colonnade.platform.metric_values import Estimate, read_stats
from colonnade.platform.personas import READERS_OF_FIGURES
from colonnade.platform.schemas import ANY_OBJECT, array, integer, obj, output, string
from colonnade.platform.services import PlatformServices, need

__all__ = ["OBSERVABILITY_TOOLS"]

GROUP = "Observability and metrics"
_WINDOW = integer("how many minutes back", minimum=1, maximum=10_080, default=60)
_ERROR = output(
    ("at", "tool", "code", "outcome"),
    at=string(),
    tool={"type": ["string", "null"]},
    code={"type": ["string", "null"]},
    outcome={"type": ["string", "null"]},
    call_id={"type": ["string", "null"]},
    trace_id={"type": ["string", "null"]},
    actor={"type": ["string", "null"]},
)


def _seconds(estimate: Estimate | None) -> float | None:
    return round(estimate.seconds, 6) if estimate is not None else None


async def get_metrics(
    services: PlatformServices, principal: Principal, args: dict[str, Any]
) -> dict[str, Any]:
    stats = read_stats(services.metrics, top_errors=int(args.get("top_errors", 10)))
    allowed = services.authorizer.visible(principal)
    tools = [calls for calls in stats.tools if permits(allowed, calls.tool)]
    seen = {calls.tool for calls in tools}
    everything = allowed is None
    return {
        "calls": sum(calls.total for calls in tools),
        "p50_s": _seconds(stats.p50) if everything else None,
        "p95_s": _seconds(stats.p95) if everything else None,
        "tools": [
            {
                "tool": calls.tool,
                "calls": calls.total,
                "by_status": dict(calls.by_status),
                "in_flight": calls.in_flight,
                "p50_s": _seconds(calls.p50),
                "p95_s": _seconds(calls.p95),
            }
            for calls in tools
        ],
        "errors": [
            {"code": e.code, "status": e.status, "calls": e.calls, "tools": [t for t in e.tools if t in seen]}
            for e in stats.errors
            if everything or any(t in seen for t in e.tools)
        ],
    }


def _error_view(record: StoredAudit) -> dict[str, Any]:
    return {
        "at": record.at.isoformat(),
        "tool": record.tool,
        "code": record.code,
        "outcome": record.outcome,
        "call_id": record.call_id,
        "trace_id": record.trace_id,
        "actor": record.actor,
    }


async def list_errors(
    services: PlatformServices, principal: Principal, args: dict[str, Any]
) -> dict[str, Any]:
    records = await failed_calls(
        services,
        principal,
        window_minutes=int(args.get("window_minutes", 60)),
        limit=int(args.get("limit", 50)),
        tool=args.get("tool"),
    )
    return {"errors": [_error_view(record) for record in reversed(records)]}


async def get_error_details(
    services: PlatformServices, principal: Principal, args: dict[str, Any]
) -> dict[str, Any]:
    call_id = str(args["call_id"])
    records = await failed_calls(
        services, principal, window_minutes=int(args.get("window_minutes", 1440)), call_id=call_id
    )
    if not records:
        raise UnknownResource(
            f"no failed call {call_id!r} of yours in the window (colonnade__list_errors lists them)"
        )
    record = records[-1]
    spec = REGISTRY.get(record.code or "")
    return {
        **_error_view(record),
        "decision": record.decision,
        "reasons": list(record.reasons),
        "args_hash": record.args_hash,
        "title": spec.title if spec is not None else None,
        "fix": spec.fix if spec is not None else None,
        "audit_seq": record.seq,
    }


async def get_error_snapshot(
    services: PlatformServices, principal: Principal, args: dict[str, Any]
) -> dict[str, Any]:
    store = need(services.snapshots, "error snapshots")
    call_id = str(args["call_id"])
    snapshot = await store.get(call_id)
    allowed = services.authorizer.visible(principal)
    # One's own failed calls, and those of tools one may see (a hidden tool's name says nothing here).
    if (
        snapshot is None
        or not in_reach(principal, snapshot.tenant)
        or not (snapshot.actor == principal.key or permits(allowed, snapshot.tool))
    ):
        raise UnknownResource(f"no snapshot of a failed call {call_id!r} of yours (colonnade__list_errors)")
    return {
        "call_id": snapshot.call_id,
        "at": snapshot.at.isoformat(),
        "tool": snapshot.tool,
        "code": snapshot.code,
        "trace_id": snapshot.trace_id,
        "actor": snapshot.actor,
        "arguments": snapshot.arguments,
        "envelope": snapshot.envelope,
    }


async def analyze_errors(
    services: PlatformServices, principal: Principal, args: dict[str, Any]
) -> dict[str, Any]:
    window = int(args.get("window_minutes", 60))
    records = await failed_calls(services, principal, window_minutes=window)
    groups: Counter[tuple[str, str]] = Counter((r.code or "unknown", r.tool or "unknown") for r in records)
    by_code: defaultdict[str, int] = defaultdict(int)
    for (code, _), count in groups.items():
        by_code[code] += count
    top = sorted(by_code.items(), key=lambda item: (-item[1], item[0]))[: int(args.get("top", 5))]
    return {
        "window_minutes": window,
        "failed_calls": len(records),
        "groups": [
            {"code": code, "tool": tool, "calls": count, "cause": _spec_field(code, "title")}
            for (code, tool), count in sorted(groups.items(), key=lambda item: (-item[1], item[0]))
        ],
        "top_fixes": [{"code": code, "calls": count, "fix": _spec_field(code, "fix")} for code, count in top],
    }


def _spec_field(code: str, name: str) -> str | None:
    spec = REGISTRY.get(code)
    return str(getattr(spec, name)) if spec is not None else None


_ERRORS_BY = frozenset(READERS_OF_FIGURES)

OBSERVABILITY_TOOLS = (
    CoreTool(
        name="get_metrics",
        adr_name="get metrics",
        group=GROUP,
        title="Get call metrics",
        description=(
            "Calls per tool you may see since the gateway started: by outcome, in flight, p50 and p95 "
            "latency, and the most frequent error codes (the figures /metrics exposes)."
        ),
        input_schema=obj(top_errors=integer("how many error codes", minimum=1, maximum=100, default=10)),
        output_schema=output(
            ("calls", "tools", "errors"), calls=integer(), tools=array(ANY_OBJECT), errors=array(ANY_OBJECT)
        ),
        scopes=(Scope.METRICS_READ,),
        personas=READERS_OF_FIGURES,
        run=get_metrics,
    ),
    CoreTool(
        name="list_errors",
        adr_name="list errors",
        group=GROUP,
        title="List failed calls",
        description=(
            "Your tenant's failed calls of tools you may see, newest first, as the audit log recorded them."
        ),
        input_schema=obj(
            window_minutes=_WINDOW,
            tool=string("only this tool (canonical name)"),
            limit=integer("how many", minimum=1, maximum=500, default=50),
        ),
        output_schema=output(("errors",), errors=array(_ERROR)),
        scopes=LOG_SCOPES,
        personas=_ERRORS_BY,
        run=list_errors,
    ),
    CoreTool(
        name="get_error_details",
        adr_name="error details",
        group=GROUP,
        title="Explain a failed call",
        description=(
            "One failed call by its call_id: code, outcome, trace id, the decision's reasons and the fix."
        ),
        input_schema=obj(
            ("call_id",), call_id=string(minLength=1), window_minutes=_WINDOW | {"default": 1440}
        ),
        output_schema=_ERROR,
        scopes=LOG_SCOPES,
        personas=_ERRORS_BY,
        run=get_error_details,
    ),
    CoreTool(
        name="get_error_snapshot",
        adr_name="error snapshot",
        group=GROUP,
        title="Get a failed call's snapshot",
        description=(
            "The stored snapshot of one failed call by its call_id: the envelope it was answered with, "
            "its code and trace id, and its arguments with secrets redacted."
        ),
        input_schema=obj(("call_id",), call_id=string(minLength=1)),
        output_schema=output(
            ("call_id", "tool", "code", "trace_id", "arguments", "envelope"),
            call_id=string(),
            at=string(),
            tool=string(),
            code=string(),
            trace_id=string(),
            actor=string(),
            arguments=ANY_OBJECT,
            envelope=ANY_OBJECT,
        ),
        scopes=LOG_SCOPES,
        personas=_ERRORS_BY,
        run=get_error_snapshot,
    ),
    CoreTool(
        name="analyze_errors",
        adr_name="analyze errors",
        group=GROUP,
        title="Analyze errors",
        description=(
            "Failed calls over a window grouped by code and tool, with each code's cause and the top fixes."
        ),
        input_schema=obj(
            window_minutes=_WINDOW, top=integer("how many fixes", minimum=1, maximum=20, default=5)
        ),
        output_schema=output(
            ("window_minutes", "failed_calls", "groups", "top_fixes"),
            window_minutes=integer(),
            failed_calls=integer(),
            groups=array(ANY_OBJECT),
            top_fixes=array(ANY_OBJECT),
        ),
        scopes=LOG_SCOPES,
        personas=_ERRORS_BY,
        run=analyze_errors,
    ),
)
