"""`/ui/audit`: the newest audit records, filtered and paged, under the chain's status.

The status is what `colonnade audit verify` reports (the same `verify_chain`): intact with its
record count and head, or broken at the first bad record. Records are shown newest first, a
page at a time; "Older records" continues below the last one shown. A record's details are folded
under the names of their fields, and long values wrap: the table fits a 1280 px window.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime

from colonnade.governance.audit import ChainReport
from colonnade.governance.audit.readers import AuditReach, StoredAudit
from colonnade.surfaces.pages.audit_query import AuditQuery
from colonnade.surfaces.pages.html import Child, Html, join, tag
from colonnade.surfaces.pages.layout import AUDIT_PATH, Visitor, document
from colonnade.surfaces.pages.links import tool_link

__all__ = ["ChainSeen", "audit_page", "audit_problem_page"]

_OUTCOMES = ("success", "invalid_request", "terminal_error", "retryable_error", "refused", "pending")
_COLUMNS = ("#", "At (UTC)", "Kind", "Principal", "Tenant", "Tool", "Decision", "Outcome", "Code")
_KINDS = (
    "call",
    "auth.failure",
    "approval.request",
    "approval.approve",
    "approval.deny",
    "approval.refuse",
    "key.create",
    "key.revoke",
    "agent.register",
    "subscription.request",
    "step.skip",
)


ChainSeen = tuple[ChainReport, datetime]
"""A chain report and when it was made."""


def audit_page(
    records: Sequence[StoredAudit],
    query: AuditQuery,
    *,
    chain: ChainSeen | None,
    reach: AuditReach,
    older: bool,
    visitor: Visitor | None = None,
) -> Html:
    """`records` newest first; `older` says whether records older than the last one match too."""
    scope = "every tenant" if reach.everything else f"tenant {reach.tenant}"
    intro = tag("p", f"Who did what, from the hash-chained audit log; records of {scope}.", class_="muted")
    return document(
        "Audit",
        tag("h1", "Audit"),
        intro,
        _chain_status(chain, reach),
        _filters(query),
        _records(records, query),
        _paging(records, query, older),
        section="Audit",
        visitor=visitor,
    )


def audit_problem_page(message: str, query: AuditQuery | None, visitor: Visitor | None = None) -> Html:
    """A filter or a reader the page cannot serve: what is wrong, and the form to try again."""
    return document(
        "Audit",
        tag("h1", "Audit"),
        tag("p", message, class_="error", id="error"),
        _filters(query) if query is not None else None,
        section="Audit",
        visitor=visitor,
    )


def _chain_status(chain: ChainSeen | None, reach: AuditReach) -> Html:
    if chain is None:
        return tag("p", "Chain: not checked (no audit log).", id="chain", class_="muted")
    report, seen = chain
    when = f" Checked {seen.strftime('%Y-%m-%d %H:%M:%S')} UTC, as colonnade audit verify does."
    if report.broken is not None:
        return tag(
            "p",
            tag("span", "Chain broken", class_="broken"),
            f" at record {report.broken.seq}: {report.broken.problem}; "
            f"the {report.records} records before it are intact.{when}",
            id="chain",
            class_="error",
        )
    counts: Child = None
    if reach.everything:
        counts = f": {report.records} records, head {report.head_seq} {report.head_hash[:16]}…"
    return tag("p", tag("span", "Chain intact", class_="ok"), counts, f".{when}", id="chain")


def _filters(query: AuditQuery) -> Html:
    def field(label: str, name: str, value: str, **attrs: str | bool) -> Html:
        return tag("label", label, tag("input", name=name, value=value, **attrs))

    return tag(
        "form",
        field("Tool", "tool", query.tool, placeholder="tenant:api:operation"),
        field("Principal", "principal", query.principal, placeholder="user:alice"),
        field("Outcome", "outcome", query.outcome, list="outcomes", placeholder="success"),
        field("Kind", "kind", query.kind, list="kinds", placeholder="call"),
        field("Since (UTC)", "since", query.since, type="datetime-local"),
        field("Until (UTC)", "until", query.until, type="datetime-local"),
        tag("datalist", *(tag("option", value=value) for value in _OUTCOMES), id="outcomes"),
        tag("datalist", *(tag("option", value=value) for value in _KINDS), id="kinds"),
        tag("button", "Filter", type="submit"),
        tag("a", "Clear", href=AUDIT_PATH) if query.filtered else None,
        method="get",
        action=AUDIT_PATH,
        class_="filters",
        role="search",
    )


def _records(records: Sequence[StoredAudit], query: AuditQuery) -> Html:
    if not records:
        said = "No audit record matches these filters." if query.filtered else "The audit log is empty."
        return tag("p", said, class_="muted", id="no-records")
    head = tag(
        "tr",
        *(
            tag("th", name, class_="num" if name == "#" else None)
            for name in (
                "#",
                "At (UTC)",
                "Kind",
                "Principal",
                "Tenant",
                "Tool",
                "Decision",
                "Outcome",
                "Code",
            )
        ),
        tag("th", "Reasons and details"),
    )
    rows = (_row(record) for record in records)
    return tag("table", tag("thead", head), tag("tbody", *rows), id="audit")


def _row(record: StoredAudit) -> Html:
    return tag(
        "tr",
        tag("td", record.seq, class_="num"),
        tag("td", record.at.strftime("%Y-%m-%d %H:%M:%S"), class_="at"),
        tag("td", record.kind),
        tag("td", record.actor or "—"),
        tag("td", record.tenant or "—"),
        tag("td", tool_link(record.tool) if record.tool else "—"),
        tag("td", record.decision or "—"),
        tag("td", record.outcome or "—", data_outcome=record.outcome or ""),
        tag("td", tag("code", record.code) if record.code else "—"),
        tag("td", "; ".join(record.reasons), _details(record), class_="why"),
        data_seq=record.seq,
        data_kind=record.kind,
    )


def _details(record: StoredAudit) -> Child:
    """A record's details folded under one line (an approval's run to a dozen lines unfolded)."""
    if not record.details:
        return None
    shown = json.dumps(record.details, ensure_ascii=False, sort_keys=True, indent=1)
    names = ", ".join(sorted(record.details))
    summary = names if len(names) <= 60 else f"{len(record.details)} details: {names[:50]}…"
    return tag("details", tag("summary", summary), tag("pre", tag("code", shown)), class_="details")


def _paging(records: Sequence[StoredAudit], query: AuditQuery, older: bool) -> Html:
    links: list[Child] = []
    if query.before is not None:
        links.append(tag("a", "Newest records", href=query.url(), id="newest"))
    if older and records:
        links.append(tag("a", "Older records →", href=query.url(before=records[-1].seq), id="older"))
    return tag("p", join(*(join(link, " ") for link in links))) if links else join()
