"""`/ui/approvals`: calls waiting for a person's approval, and what became of them.

Each approval shows the tool, the exact arguments (their SHA-256 is what the approval binds),
who asked, why approval is needed (the policy's reasons), and when the request expires. An
approver decides in one form (one comment, an Approve and a Deny button) carrying the session's
CSRF token; approving runs the call at once only when "run the call now" is ticked (it is not by
default: one click never executes a destructive call), and the page then shows the call's envelope.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime
from urllib.parse import quote

from colonnade.calls.approvals import ApprovalRecord
from colonnade.calls.envelope import CallResult
from colonnade.surfaces.pages.admissions_page import ADMISSIONS_PATH
from colonnade.surfaces.pages.html import Child, Html, join, separated, tag
from colonnade.surfaces.pages.layout import APPROVALS_PATH, Visitor, csrf_input, document
from colonnade.surfaces.pages.links import tool_link

__all__ = ["STATES", "Decidable", "approval_page", "approval_url", "approvals_page"]

STATES = ("pending", "approved", "denied", "used", "expired")
_SECTION = "Approvals"
_COMMENT_MAX = 2000


def approval_url(approval_id: str, action: str | None = None) -> str:
    base = f"{APPROVALS_PATH}/{quote(approval_id, safe='')}"
    return f"{base}/{action}" if action else base


Decidable = Callable[[ApprovalRecord], bool]
"""Whether the visitor is shown the approve and deny forms of an approval (the desk decides anyway)."""


def approvals_page(
    records: Sequence[ApprovalRecord],
    state: str,
    *,
    now: datetime,
    decidable: Decidable,
    runnable: Decidable,
    visitor: Visitor | None,
    tools_waiting: int | None = None,
) -> Html:
    """The queue in one state; `tools_waiting` points to the tool admissions page when it is served."""
    tabs = separated(
        (
            tag("strong", label) if value == state else tag("a", label, href=_list_url(value))
            for value, label in (*((s, s) for s in STATES), ("", "all"))
        ),
        " · ",
    )
    if records:
        body: Html = join(
            *(
                _card(record, now, visitor, decide=decidable(record), run=runnable(record))
                for record in records
            )
        )
    else:
        said = f"No approval is {state} that you may see." if state else "No approval you may see."
        body = tag("p", said, class_="muted", id="none")
    intro = tag(
        "p",
        "Calls that need a person's approval wait here; nothing runs until an approver (never the "
        "requester) approves the exact arguments shown. The list shows your own requests and those "
        "you may decide on.",
        class_="muted",
    )
    return document(
        "Approvals",
        tag("h1", "Approvals"),
        intro,
        _admissions_pointer(tools_waiting),
        tag("p", tabs, id="states"),
        body,
        section=_SECTION,
        visitor=visitor,
    )


def approval_page(
    record: ApprovalRecord,
    *,
    now: datetime,
    may_decide: bool,
    may_run: bool,
    visitor: Visitor | None,
    notice: Child = None,
    result: CallResult | None = None,
) -> Html:
    """One approval, after a decision or on its own; `notice` says what just happened."""
    return document(
        f"Approval {record.id}",
        tag("h1", "Approval ", tag("code", record.id)),
        notice,
        _result(result) if result is not None else None,
        _card(record, now, visitor, decide=may_decide, run=may_run),
        tag("p", tag("a", "All approvals", href=APPROVALS_PATH)),
        section=_SECTION,
        visitor=visitor,
    )


def _admissions_pointer(waiting: int | None) -> Html | None:
    if waiting is None:
        return None
    said = (
        f"{waiting} downstream tool definition{'s wait' if waiting != 1 else ' waits'} for admission: "
        if waiting
        else "No downstream tool definition waits for admission: "
    )
    return tag("p", said, tag("a", "tool admissions", href=ADMISSIONS_PATH), class_="muted", id="admissions")


def _list_url(state: str) -> str:
    """The queue in one state; an empty state lists all (no `state` at all means pending)."""
    return f"{APPROVALS_PATH}?state={state}"


def _card(record: ApprovalRecord, now: datetime, visitor: Visitor | None, *, decide: bool, run: bool) -> Html:
    facts: list[tuple[str, Child]] = [
        ("State", tag("span", record.state, class_=f"badge state-{record.state}", data_state=record.state)),
        ("Tool", join(tool_link(record.tool), f" (version {record.version})")),
        ("Tenant", record.tenant),
        ("Requester", tag("code", record.requester)),
        ("Why approval", _reasons(record.reasons)),
        ("Asked", _moment(record.created_at)),
        ("Expires", _expiry(record, now)),
        ("Arguments SHA-256", tag("code", record.input_hash)),
    ]
    if record.confirmed_by:
        facts.append(("Confirmed by the requesting user", "yes"))
    if record.approver:
        facts.append(("Decided by", tag("code", record.approver)))
        facts.append(("Comment", record.comment or "—"))
    arguments = json.dumps(record.input, indent=2, ensure_ascii=False, sort_keys=True)
    return tag(
        "section",
        tag("h2", tag("a", record.tool, href=approval_url(record.id))),
        tag("dl", *(join(tag("dt", label), tag("dd", value)) for label, value in facts), class_="facts"),
        tag("h3", "Arguments"),
        tag("pre", tag("code", arguments), class_="arguments"),
        _decide_forms(record, visitor) if decide else None,
        _run_form(record, visitor) if run else None,
        class_="approval",
        data_approval=record.id,
        data_state=record.state,
    )


def _reasons(reasons: Sequence[str]) -> Child:
    if not reasons:
        return "—"
    return tag("ul", *(tag("li", reason) for reason in reasons), class_="reasons")


def _decide_forms(record: ApprovalRecord, visitor: Visitor | None) -> Html:
    """One form: the comment goes with whichever button is pressed (Deny posts to its own URL)."""
    comment = tag(
        "input",
        type="text",
        name="comment",
        maxlength=_COMMENT_MAX,
        placeholder="comment (kept in the audit log)",
        aria_label="comment",
    )
    return join(
        tag("h3", "Decide"),
        tag(
            "form",
            csrf_input(visitor),
            comment,
            tag("label", tag("input", type="checkbox", name="run", value="1"), " run the call now"),
            tag("button", "Approve", type="submit", class_="approve"),
            tag("button", "Deny", type="submit", class_="deny", formaction=approval_url(record.id, "deny")),
            method="post",
            action=approval_url(record.id, "approve"),
            class_="decide",
        ),
    )


def _run_form(record: ApprovalRecord, visitor: Visitor | None) -> Html:
    """The approved call, run now as its requester (what `POST /v1/approvals/{id}/resume` does)."""
    return tag(
        "form",
        csrf_input(visitor),
        tag("button", "Run the approved call", type="submit", class_="run"),
        method="post",
        action=approval_url(record.id, "run"),
        class_="decide",
    )


def _result(result: CallResult) -> Html:
    """What the call answered: its outcome in a line, and the whole envelope (as REST returns it)."""
    error = result.error
    said: list[Child] = [f"The call ran: {result.status.value}"]
    if error is not None:
        said.append(join(" — ", tag("code", error.code), f" {error.message}"))
    envelope = json.dumps(result.model_dump(mode="json"), indent=2, ensure_ascii=False)
    return join(
        tag("p", *said, ".", class_="error" if error is not None else "note", id="call-result"),
        tag("h3", "Result envelope"),
        tag("pre", tag("code", envelope), class_="envelope", id="call-envelope"),
    )


def _expiry(record: ApprovalRecord, now: datetime) -> Child:
    """When the request lapses; the time left only while someone can still act on it."""
    if record.state in ("pending", "approved"):
        return join(_moment(record.expires_at), f" ({_until(record.expires_at, now)})")
    return _moment(record.expires_at)


def _moment(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def _until(moment: datetime, now: datetime) -> str:
    seconds = int((moment - now).total_seconds())
    if seconds <= 0:
        return "passed"
    minutes, seconds = divmod(seconds, 60)
    return f"in {minutes} min {seconds} s" if minutes else f"in {seconds} s"
