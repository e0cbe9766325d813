"""Security and compliance: a posture score with its reasons, the audit log, and a scan of the
served contracts and servers for credentials in URLs, unsafe side effects and poisoned descriptions."""

from __future__ import annotations

from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from typing import Any

from colonnade.catalog.tool import Tool
from colonnade.governance.audit.events import parse_kind
from colonnade.governance.audit.readers import (
    AUDIT_READ_SCOPES,
    AuditFilter,
    AuditReach,
    audit_reach,
    read_records,
)
from colonnade.governance.authorization import permits
from colonnade.governance.personas import Persona, Scope
from colonnade.governance.principal import Principal
from colonnade.governance.refusals import Forbidden
from colonnade.platform.core_tool import CoreTool
from colonnade.platform.personas import SECURITY
from colonnade.platform.posture import posture_checks, scan_tools
from colonnade.platform.refusal import PlatformRefusal
from colonnade.platform.schemas import ANY_OBJECT, array, integer, obj, output, string
from colonnade.platform.services import PlatformServices, need

__all__ = ["SECURITY_TOOLS"]

GROUP = "Security and compliance"
_AUDIT_READERS = frozenset({Persona.ADMIN, Persona.PRODUCT_OWNER, Persona.SECURITY})


def _visible_tools(services: PlatformServices, principal: Principal) -> list[Tool]:
    allowed = services.authorizer.visible(principal)
    return [tool for tool in services.catalog.tools() if permits(allowed, tool.canonical_name)]


async def security_score(
    services: PlatformServices, principal: Principal, _: dict[str, Any]
) -> dict[str, Any]:
    checks = await posture_checks(services, principal, _visible_tools(services, principal))
    total = sum(check.weight for check in checks)
    passed = sum(check.weight for check in checks if check.ok)
    return {
        "score": round(100 * passed / total) if total else 100,
        "passed": sum(1 for check in checks if check.ok),
        "failed": sum(1 for check in checks if not check.ok),
        "checks": [asdict(check) for check in checks],
    }


async def scan_vulnerabilities(
    services: PlatformServices, principal: Principal, _: dict[str, Any]
) -> dict[str, Any]:
    tools = _visible_tools(services, principal)
    findings = scan_tools(tools)
    return {
        "scanned_tools": len(tools),
        "errors": sum(1 for finding in findings if finding.severity == "error"),
        "findings": [asdict(finding) for finding in findings],
    }


async def list_audit_events(
    services: PlatformServices, principal: Principal, args: dict[str, Any]
) -> dict[str, Any]:
    audit = need(services.audit, "an audit log")
    reach = audit_reach(principal)
    if reach is None:
        if services.authorizer.visible(principal) is not None:
            raise Forbidden(f"reading the audit log needs one of {', '.join(AUDIT_READ_SCOPES)}")
        reach = AuditReach(principal.tenant)
    kind = args.get("kind")
    try:
        kind = parse_kind(str(kind)).value if kind is not None else None
    except ValueError as exc:
        raise PlatformRefusal("I-REQ-GOVERNANCE", str(exc)) from None
    since = datetime.now(UTC) - timedelta(minutes=int(args.get("window_minutes", 1440)))
    where = AuditFilter(
        actor=args.get("actor"), tool=args.get("tool"), outcome=args.get("outcome"), kind=kind, since=since
    )
    records = await read_records(audit, reach, where, int(args.get("limit", 100)))
    return {
        "events": [
            {
                "seq": r.seq,
                "at": r.at.isoformat(),
                "kind": r.kind,
                "actor": r.actor,
                "tenant": r.tenant,
                "tool": r.tool,
                "decision": r.decision,
                "outcome": r.outcome,
                "code": r.code,
                "call_id": r.call_id,
                "trace_id": r.trace_id,
                "details": r.details,
            }
            for r in reversed(records)
        ]
    }


SECURITY_TOOLS = (
    CoreTool(
        name="security_score",
        adr_name="security score",
        group=GROUP,
        title="Security score",
        description=(
            "A posture report with reasons: authentication, TLS, approval of destructive tools, agents' "
            "allow-lists, key rotation, backend credentials and https, federated tools."
        ),
        input_schema=obj(),
        output_schema=output(
            ("score", "checks"), score=integer(minimum=0, maximum=100), checks=array(ANY_OBJECT)
        ),
        scopes=(Scope.SECURITY_READ,),
        personas=SECURITY,
        run=security_score,
    ),
    CoreTool(
        name="list_audit_events",
        adr_name="list audit events",
        group=GROUP,
        title="List audit events",
        description="Who did what, newest first, from the hash-chained audit log of your tenant.",
        input_schema=obj(
            kind=string("e.g. call, key.rotate, subscription.request"),
            actor=string("e.g. user:alice"),
            tool=string("canonical tool name"),
            outcome=string("e.g. success, terminal_error"),
            window_minutes=integer("how many minutes back", minimum=1, maximum=525_600, default=1440),
            limit=integer("how many", minimum=1, maximum=1000, default=100),
        ),
        output_schema=output(("events",), events=array(ANY_OBJECT)),
        scopes=tuple(AUDIT_READ_SCOPES),
        personas=_AUDIT_READERS,
        run=list_audit_events,
    ),
    CoreTool(
        name="scan_vulnerabilities",
        adr_name="scan vulnerabilities",
        group=GROUP,
        title="Scan for vulnerabilities",
        description=(
            "Check the contracts' and servers' tools you may see for credentials in URLs, unsafe "
            "side-effect declarations and suspicious (poisoned) descriptions."
        ),
        input_schema=obj(),
        output_schema=output(
            ("scanned_tools", "findings"),
            scanned_tools=integer(),
            errors=integer(),
            findings=array(ANY_OBJECT),
        ),
        scopes=(Scope.SECURITY_READ,),
        personas=SECURITY,
        run=scan_vulnerabilities,
    ),
)
