"""The audit page's route: who may read, the records their filters select, and the chain's status.

Verifying the chain reads every record, so a report is reused for `chain_check_s` (default 30 s)
before the next page view walks the chain again; the page says when it was made.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime

from starlette.requests import Request
from starlette.responses import Response

from colonnade.governance.audit import AuditLog
from colonnade.governance.audit.readers import (
    AUDIT_READ_SCOPES,
    AuditFilter,
    AuditReach,
    StoredAudit,
    chain_report,
    read_records,
)
from colonnade.governance.principal import Principal
from colonnade.surfaces.edge import principal_of_scope
from colonnade.surfaces.pages.audit_page import ChainSeen, audit_page, audit_problem_page
from colonnade.surfaces.pages.audit_query import PAGE_SIZE, AuditQuery, BadFilter, parse_audit_query
from colonnade.surfaces.pages.forms import visitor_of
from colonnade.surfaces.pages.layout import page_response

__all__ = ["AuditView", "Reach"]

Reach = Callable[[Principal], AuditReach | None]
"""How much of the audit log a principal may read (None: nothing)."""


class AuditView:
    def __init__(self, audit: AuditLog | None, reach: Reach, *, chain_check_s: float = 30.0) -> None:
        self.audit = audit
        self.reach = reach
        self.chain_check_s = chain_check_s
        self._chain: tuple[float, ChainSeen] | None = None

    async def page(self, request: Request) -> Response:
        visitor = visitor_of(request)
        reach = self.reach(principal_of_scope(request.scope))
        if reach is None:
            needed = " or ".join(AUDIT_READ_SCOPES)
            message = f"Reading the audit log needs the scope {needed} (A-AUTH-SCOPE)."
            return page_response(audit_problem_page(message, None, visitor), 403)
        try:
            query = parse_audit_query(request.query_params)
        except BadFilter as problem:
            return page_response(audit_problem_page(f"{problem}.", AuditQuery(), visitor), 400)
        if self.audit is None:
            message = "This gateway keeps no audit log: it runs without a database."
            return page_response(audit_problem_page(message, None, visitor), 404)
        records = await self._records(self.audit, query, reach)
        older = len(records) > PAGE_SIZE
        page = audit_page(
            records[:PAGE_SIZE],
            query,
            chain=await self._chain_status(self.audit),
            reach=reach,
            older=older,
            visitor=visitor,
        )
        return page_response(page)

    async def _records(self, audit: AuditLog, query: AuditQuery, reach: AuditReach) -> list[StoredAudit]:
        """Newest first, one more than a page (to know whether older records match)."""
        where = AuditFilter(
            actor=audit.stored_actor(query.principal) if query.principal else None,
            tool=query.tool or None,
            outcome=query.outcome or None,
            kind=query.kind or None,
            since=query.moment("since"),
            until=query.moment("until"),
            before_seq=query.before,
        )
        return (await read_records(audit, reach, where, PAGE_SIZE + 1))[::-1]

    async def _chain_status(self, audit: AuditLog) -> ChainSeen:
        now = time.monotonic()
        if self._chain is None or now - self._chain[0] >= self.chain_check_s:
            report = await chain_report(audit)
            self._chain = (now, (report, datetime.now(UTC)))
        return self._chain[1]
