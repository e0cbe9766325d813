"""`/ui/admissions`: downstream tool definitions that wait for two people before they are served.

A server's new tool, or a changed definition of an admitted one, is parked by the tool admission
(`runtime/tool_admission.py`). This page shows each with what a reviewer needs: new or changed,
both digests, the readable diff, the poisoning findings and who approved so far. The approve form
is shown to administrators in a logged-in page session; the same person approving twice is
refused by the admission itself, as over REST and the CLI.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

from colonnade.surfaces.pages.html import Child, Html, join, tag
from colonnade.surfaces.pages.layout import APPROVALS_PATH, Visitor, document, post_button

__all__ = ["ADMISSIONS_PATH", "admissions_page", "admit_url"]

ADMISSIONS_PATH = "/ui/admissions"
_SECTION = "Approvals"


def admit_url(server: str, tool: str) -> str:
    return f"{ADMISSIONS_PATH}/{quote(server, safe='')}/{quote(tool, safe='')}/admit"


def admissions_page(
    servers: Sequence[Mapping[str, Any]],
    *,
    approvals_needed: int,
    may_admit: bool,
    visitor: Visitor | None,
    notice: Child = None,
) -> Html:
    """Every server's parked tools; `servers` are the admission reports (`Servers.admission_of`)."""
    waiting = [(report, parked) for report in servers for parked in report.get("parked", [])]
    intro = tag(
        "p",
        "A downstream server's new tool, or a changed definition of a tool already admitted, is not "
        f"served until {approvals_needed} different people approve it. A changed tool is quarantined "
        "(or kept at its admitted definition where the server says so) meanwhile.",
        class_="muted",
    )
    how = None
    if not may_admit:
        how = tag(
            "p",
            "Approving needs an administrator in a logged-in page session with server.admin_api on; "
            "otherwise use ",
            tag("code", "colonnade servers admit SERVER TOOL"),
            ".",
            class_="muted",
            id="how-to-admit",
        )
    body: Html
    if waiting:
        body = join(
            *(_card(report, parked, approvals_needed, may_admit, visitor) for report, parked in waiting)
        )
    else:
        body = tag("p", "No tool definition waits for admission.", class_="muted", id="none")
    return document(
        "Tool admissions",
        tag("h1", "Tool admissions"),
        intro,
        notice,
        how,
        body,
        tag("p", tag("a", "Call approvals", href=APPROVALS_PATH)),
        section=_SECTION,
        visitor=visitor,
    )


def _card(
    report: Mapping[str, Any],
    parked: Mapping[str, Any],
    needed: int,
    may_admit: bool,
    visitor: Visitor | None,
) -> Html:
    server, tool = str(report.get("server", "")), str(parked["tool"])
    approvals: list[str] = list(parked.get("approvals", []))
    facts: list[tuple[str, Child]] = [
        ("Server", tag("code", server)),
        ("Kind", tag("span", parked["kind"], class_=f"badge kind-{parked['kind']}")),
        ("Listed digest", tag("code", parked["digest"])),
        ("Admitted digest", tag("code", parked["admitted_digest"]) if parked.get("admitted_digest") else "—"),
        ("Waiting since", parked.get("since", "—")),
        ("Approvals", join(f"{len(approvals)} of {needed}", _people(approvals))),
    ]
    if parked.get("blocked"):
        facts.append(("Blocked", tag("span", "yes: the poisoning check refuses it", class_="broken")))
    return tag(
        "section",
        tag("h2", tag("code", tool), " of ", tag("code", server)),
        tag("dl", *(join(tag("dt", label), tag("dd", value)) for label, value in facts), class_="facts"),
        _findings(parked.get("findings", [])),
        tag("h3", "Change"),
        tag("pre", tag("code", parked.get("diff") or "(no earlier definition)"), class_="diff"),
        _admit_form(server, tool, visitor) if may_admit and not parked.get("blocked") else None,
        class_="admission",
        data_server=server,
        data_tool=tool,
    )


def _people(approvals: Sequence[str]) -> Child:
    if not approvals:
        return None
    return join(": ", *(join(tag("code", who), " ") for who in approvals))


def _findings(findings: Sequence[Mapping[str, Any]]) -> Html:
    if not findings:
        return join(tag("h3", "Poisoning checks"), tag("p", "No finding.", class_="muted"))
    rows = (
        tag(
            "tr",
            tag("td", tag("code", f["code"])),
            tag("td", f.get("severity", "")),
            tag("td", f.get("message", "")),
            tag("td", f.get("fix") or "—"),
        )
        for f in findings
    )
    head = tag("tr", tag("th", "Code"), tag("th", "Severity"), tag("th", "Finding"), tag("th", "Fix"))
    return join(tag("h3", "Poisoning checks"), tag("table", head, *rows, class_="findings"))


def _admit_form(server: str, tool: str, visitor: Visitor | None) -> Html:
    return post_button(visitor, admit_url(server, tool), "Approve this definition")
