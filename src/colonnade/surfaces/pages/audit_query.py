"""The audit page's filters, read from its query string: what to show, and what to say when it is wrong."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import urlencode

from colonnade.governance.audit import parse_kind
from colonnade.surfaces.pages.layout import AUDIT_PATH

__all__ = ["FILTERS", "PAGE_SIZE", "AuditQuery", "BadFilter", "parse_audit_query"]

PAGE_SIZE = 50
FILTERS = ("tool", "principal", "outcome", "kind", "since", "until")
_MAX_TEXT = 300


class BadFilter(ValueError):
    """A filter the page cannot use; the message says which and how to write it."""


@dataclass(frozen=True, slots=True)
class AuditQuery:
    tool: str = ""
    principal: str = ""
    outcome: str = ""
    kind: str = ""
    since: str = ""
    until: str = ""
    before: int | None = None

    def moment(self, name: str) -> datetime | None:
        """`since` or `until` as an aware time (a time without a zone is UTC)."""
        value = getattr(self, name)
        if not value:
            return None
        moment = datetime.fromisoformat(value)
        return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)

    def url(self, *, before: int | None = None) -> str:
        """This query's page (the newest records, or those older than `before`)."""
        params = [(name, getattr(self, name)) for name in FILTERS if getattr(self, name)]
        if before is not None:
            params.append(("before", str(before)))
        return f"{AUDIT_PATH}?{urlencode(params)}" if params else AUDIT_PATH

    @property
    def filtered(self) -> bool:
        return any(getattr(self, name) for name in FILTERS)


def parse_audit_query(params: Mapping[str, str]) -> AuditQuery:
    values = {name: params.get(name, "").strip() for name in FILTERS}
    for name, value in values.items():
        if len(value) > _MAX_TEXT:
            raise BadFilter(f"the {name} filter is longer than {_MAX_TEXT} characters")
    if values["kind"]:
        try:
            parse_kind(values["kind"])
        except ValueError as exc:
            raise BadFilter(f"kind: {exc}") from None
    for name in ("since", "until"):
        if values[name]:
            try:
                datetime.fromisoformat(values[name])
            except ValueError:
                raise BadFilter(
                    f"{name}: {values[name]!r} is not a time; write it as YYYY-MM-DDTHH:MM (UTC)"
                ) from None
    before: int | None = None
    raw_before = params.get("before", "").strip()
    if raw_before:
        if not raw_before.isdigit() or len(raw_before) > 18:
            raise BadFilter(f"before: {raw_before[:40]!r} is not a record number")
        before = int(raw_before)
    return AuditQuery(**values, before=before)
