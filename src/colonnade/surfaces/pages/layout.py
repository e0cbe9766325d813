"""The frame every page shares: header with navigation and version, inline style, strict headers.

Pages load nothing from anywhere: the style is inline and allowed by its hash in the
Content-Security-Policy, which also forbids scripts, so escaped contract text stays inert even
if an escaping bug ever let markup through.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass

from starlette.responses import HTMLResponse

from colonnade import __version__
from colonnade.surfaces.pages.html import Child, Html, tag

__all__ = [
    "ACCESS_PATH",
    "APPROVALS_PATH",
    "AUDIT_PATH",
    "CATALOG_PATH",
    "CONTRACTS_PATH",
    "CSRF_FIELD",
    "LOGIN_PATH",
    "LOGOUT_PATH",
    "METRICS_PATH",
    "POLICIES_PATH",
    "ROUTING_PATH",
    "SECURITY_HEADERS",
    "SERVERS_PATH",
    "TOOLS_PATH",
    "USAGE_PATH",
    "Visitor",
    "csrf_input",
    "document",
    "page_response",
    "post_button",
]

CATALOG_PATH = "/ui/catalog"
METRICS_PATH = "/ui/metrics"
TOOLS_PATH = "/ui/tools"
AUDIT_PATH = "/ui/audit"
APPROVALS_PATH = "/ui/approvals"
ACCESS_PATH = "/ui/access"
POLICIES_PATH = "/ui/policies"
CONTRACTS_PATH = "/ui/contracts"
SERVERS_PATH = "/ui/servers"
EVENTS_PATH = "/ui/events"
USAGE_PATH = "/ui/usage"
ROUTING_PATH = "/ui/routing"
LOGIN_PATH = "/ui/login"
LOGOUT_PATH = "/ui/logout"
CSRF_FIELD = "csrf_token"

_STYLE = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d2433;background:#f7f7f9}
header{display:flex;gap:1.5em;align-items:baseline;padding:.7em 1.5em;background:#1d2433;color:#fff}
header a{color:#cfd8ff;text-decoration:none}header a.here{color:#fff;font-weight:600}
header .brand{font-weight:700;color:#fff}header .version{margin-left:auto;color:#9aa3b5;font-size:.85em}
main{padding:1em 1.5em 3em;max-width:80em}
h1{font-size:1.4em;margin:.4em 0}h2{font-size:1.15em;margin:1.4em 0 .4em}
table{border-collapse:collapse;width:100%;background:#fff;margin:.3em 0 1em}
th,td{text-align:left;vertical-align:top;padding:.35em .6em;border-bottom:1px solid #e3e5ea}
th{background:#eef0f4;font-weight:600}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em}
pre{background:#fff;border:1px solid #e3e5ea;padding:.7em;overflow:auto;max-height:40em}
.muted{color:#6b7385}.note{background:#fff8e1;border:1px solid #f0d98c;padding:.6em .8em}
.badge{display:inline-block;padding:0 .5em;border-radius:.7em;font-size:.8em;white-space:nowrap;
border:1px solid transparent}
.se-none{background:#eef0f4;color:#4a5263}.se-read{background:#e3f2e6;color:#1f6b33}
.se-write{background:#fff1d6;color:#8a5a00}.se-destructive{background:#fde2e1;color:#a3221b}
.approval-required{background:#fde2e1;color:#a3221b;border-color:#f3b3ae}
.approval-none{background:#eef0f4;color:#4a5263}.agents-no{background:#fff1d6;color:#8a5a00}
.llm-ready{background:#e3f2e6;color:#1f6b33}.llm-not-ready{background:#fff1d6;color:#8a5a00}
form.search{display:flex;gap:.5em;margin:.6em 0 1em}form.search input[type=search]{flex:1;padding:.4em}
ul.reasons{margin:0;padding-left:1.1em;font-size:.88em}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.25em 1em}
dl.facts dt{font-weight:600}dl.facts dd{margin:0}.prose{white-space:pre-line;max-width:60em}
header form{margin:0}header .visitor{color:#cfd8ff;font-size:.9em}
header button{background:none;border:1px solid #9aa3b5;color:#fff;border-radius:.3em;cursor:pointer}
form.login{display:grid;gap:.5em;max-width:36em;background:#fff;border:1px solid #e3e5ea;padding:1em}
form.login input[type=password]{padding:.4em;font-family:ui-monospace,monospace}
.error{background:#fde2e1;border:1px solid #f3b3ae;color:#7a1711;padding:.6em .8em}
.ok{color:#1f6b33;font-weight:600}.broken{color:#a3221b;font-weight:600}
form.filters{display:flex;flex-wrap:wrap;gap:.5em;align-items:end;margin:.6em 0 1em}
form.filters label{display:grid;font-size:.85em;color:#4a5263}
#audit td{overflow-wrap:anywhere}td.at{white-space:nowrap;overflow-wrap:normal}td.why{min-width:14em}
details.details summary{cursor:pointer;color:#4a5263;font-size:.85em}
details.details pre{white-space:pre-wrap;overflow-wrap:anywhere;font-size:.8em;max-height:24em;margin:.3em 0}
form.decide{display:flex;gap:.4em;align-items:center;margin:.2em 0}
form.decide input[type=text]{flex:1;padding:.3em}
section.approval,section.admission{background:#fff;border:1px solid #e3e5ea;padding:.2em 1em 1em;
margin:0 0 1em}
.state-pending{background:#fff1d6;color:#8a5a00}.state-approved,.state-used{background:#e3f2e6;color:#1f6b33}
.state-denied,.state-expired{background:#eef0f4;color:#4a5263}
"""
_STYLE_HASH = base64.b64encode(hashlib.sha256(_STYLE.encode("utf-8")).digest()).decode("ascii")

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        f"default-src 'none'; style-src 'sha256-{_STYLE_HASH}'; form-action 'self'; "
        "base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}

_NAV = (
    ("Catalog", CATALOG_PATH),
    ("Approvals", APPROVALS_PATH),
    ("Access", ACCESS_PATH),
    ("Contracts", CONTRACTS_PATH),
    ("Servers", SERVERS_PATH),
    ("Policies", POLICIES_PATH),
    ("Audit", AUDIT_PATH),
    ("Metrics", METRICS_PATH),
    ("Usage", USAGE_PATH),
    ("Routing", ROUTING_PATH),
    ("Events", EVENTS_PATH),
)


@dataclass(frozen=True, slots=True)
class Visitor:
    """Who is looking, for the header: their principal, and their session's CSRF token (to log out)."""

    name: str
    csrf_token: str | None = None


def csrf_input(visitor: Visitor | None) -> Html | None:
    """The hidden field every state-changing form of a session carries (checked server-side)."""
    if visitor is None or visitor.csrf_token is None:
        return None
    return tag("input", type="hidden", name=CSRF_FIELD, value=visitor.csrf_token)


def post_button(visitor: Visitor | None, action: str, label: str, *, id: str | None = None) -> Html:
    """A form of one button that POSTs to `action` with the session's CSRF token (no other field)."""
    return tag(
        "form",
        csrf_input(visitor),
        tag("button", label, type="submit"),
        method="post",
        action=action,
        class_="decide",
        id=id,
    )


def _visitor_part(visitor: Visitor | None) -> Html | None:
    if visitor is None:
        return None
    logout = None
    if visitor.csrf_token is not None:
        logout = tag(
            "form",
            csrf_input(visitor),
            tag("button", "Log out", type="submit", id="logout"),
            method="post",
            action=LOGOUT_PATH,
        )
    return tag("span", tag("span", visitor.name, class_="visitor", id="visitor"), " ", logout)


def document(title: str, *body: Child, section: str | None = None, visitor: Visitor | None = None) -> Html:
    """A whole page; `section` is the navigation entry to highlight (its label)."""
    links = [tag("a", label, href=path, class_="here" if label == section else None) for label, path in _NAV]
    head = tag(
        "head",
        tag("meta", charset="utf-8"),
        tag("meta", name="viewport", content="width=device-width, initial-scale=1"),
        tag("title", f"{title} · Colonnade"),
        tag("style", Html(_STYLE)),
    )
    header = tag(
        "header",
        tag("a", "Colonnade", href=CATALOG_PATH, class_="brand"),
        *links,
        tag("span", f"gateway {__version__}", class_="version"),
        _visitor_part(visitor),
    )
    return Html("<!DOCTYPE html>\n" + tag("html", head, tag("body", header, tag("main", *body)), lang="en"))


def page_response(page: Html, status_code: int = 200) -> HTMLResponse:
    """`text/html; charset=utf-8`; text that UTF-8 cannot carry (lone surrogates) becomes '?'."""
    body = page.encode("utf-8", errors="replace")
    return HTMLResponse(body, status_code=status_code, headers=SECURITY_HEADERS)
