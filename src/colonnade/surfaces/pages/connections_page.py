"""`/ui/connections`: the upstream accounts a person connects for mode user_oauth, one row each.

Each row says whether the visitor has connected (as whom at the upstream, which scopes, since
when) and offers Connect or Disconnect; both are forms of the session (CSRF token). Nothing of a
token is ever shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol
from urllib.parse import quote

from colonnade.surfaces.pages.html import Child, Html, tag
from colonnade.surfaces.pages.layout import Visitor, document, post_button

__all__ = ["CONNECTIONS_PATH", "Account", "connection_result_page", "connections_page"]

CONNECTIONS_PATH = "/ui/connections"


class Account(Protocol):
    """One provider as the visitor stands with it (the grants service's `Connection`)."""

    @property
    def provider(self) -> str: ...
    @property
    def display_name(self) -> str: ...
    @property
    def connected(self) -> bool: ...
    @property
    def subject(self) -> str | None: ...
    @property
    def scopes(self) -> tuple[str, ...]: ...
    @property
    def since(self) -> datetime | None: ...


def connections_page(accounts: Sequence[Account], *, visitor: Visitor | None, notice: Child = None) -> Html:
    may_change = visitor is not None and visitor.csrf_token is not None
    head = tag("tr", *(tag("th", h) for h in ("Account", "State", "Upstream subject", "Scopes", "Since", "")))
    table = (
        tag("table", head, *(_row(account, visitor, may_change) for account in accounts), id="connections")
        if accounts
        else tag("p", "No upstream asks for a connected account.", class_="muted", id="none")
    )
    how = None
    if not may_change:
        how = tag(
            "p", "Connecting an account needs a logged-in page session.", class_="muted", id="read-only"
        )
    return document(
        "Connected accounts",
        tag("h1", "Connected accounts"),
        tag(
            "p",
            "Some upstreams act with your own account there: connect it once, and your calls through the "
            "gateway reach them as you. Disconnecting revokes the gateway's grant at the upstream.",
            class_="muted",
        ),
        notice,
        table,
        how,
        visitor=visitor,
    )


def _row(account: Account, visitor: Visitor | None, may_change: bool) -> Html:
    where = f"{CONNECTIONS_PATH}/{quote(account.provider, safe='')}"
    if account.connected:
        action = post_button(
            visitor, f"{where}/disconnect", "Disconnect", id=f"disconnect-{account.provider}"
        )
        state = tag("span", "connected", class_="badge state-approved")
    else:
        action = post_button(visitor, f"{where}/connect", "Connect", id=f"connect-{account.provider}")
        state = tag("span", "not connected", class_="badge state-expired")
    return tag(
        "tr",
        tag("td", account.display_name, " ", tag("code", account.provider)),
        tag("td", state),
        tag("td", account.subject or ""),
        tag("td", " ".join(account.scopes)),
        tag("td", account.since.strftime("%Y-%m-%d %H:%M UTC") if account.since else ""),
        tag("td", action if may_change else None),
        id=f"account-{account.provider}",
    )


def connection_result_page(message: str, *, ok: bool, visitor: Visitor | None) -> Html:
    """What the callback answers: a page of its own, so that it renders whether or not the browser
    sent the session cookie on the provider's redirect, with the way back."""
    return document(
        "Connected accounts",
        tag("h1", "Account connected" if ok else "Account not connected"),
        tag("p", message, class_="note" if ok else "error", id="notice" if ok else "error"),
        tag("p", tag("a", "Back to Connected accounts", href=CONNECTIONS_PATH, id="back")),
        visitor=visitor,
    )
