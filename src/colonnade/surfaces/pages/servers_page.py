"""`/ui/servers`: the downstream MCP servers, their health, and the forms to add, restart and remove.

The table is `GET /v1/servers` (state, tools, calls, errors, last error, warnings); the forms do
what `POST /v1/servers`, `.../restart` and `DELETE /v1/servers/{name}` do, for an administrator with
`server.admin_api` on. A server added here lasts until the gateway stops, as over REST.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

from colonnade.surfaces.pages.html import Child, Html, join, tag
from colonnade.surfaces.pages.layout import SERVERS_PATH, Visitor, csrf_input, document, post_button

__all__ = ["servers_page"]


def servers_page(
    servers: Sequence[Mapping[str, Any]], *, visitor: Visitor | None, may_change: bool, notice: Child = None
) -> Html:
    forms = may_change and visitor is not None and visitor.csrf_token is not None
    head = tag(
        "tr",
        *(
            tag("th", h)
            for h in ("Server", "Transport", "State", "Tools", "Calls", "Errors", "Last error", "")
        ),
    )
    table = (
        tag("table", head, *(_row(server, visitor, forms) for server in servers), id="servers")
        if servers
        else tag("p", "No downstream server is configured.", class_="muted", id="none")
    )
    how = None
    if not forms:
        how = tag(
            "p",
            "Adding, restarting and removing servers needs an administrator in a logged-in page session, "
            "with server.admin_api on.",
            class_="muted",
            id="read-only",
        )
    return document(
        "Servers",
        tag("h1", "Servers"),
        notice,
        table,
        how,
        _add_form(visitor) if forms else None,
        section="Servers",
        visitor=visitor,
    )


def _row(server: Mapping[str, Any], visitor: Visitor | None, forms: bool) -> Html:
    name = str(server["name"])
    state = str(server.get("state", ""))
    warnings = server.get("warnings") or []
    actions = None
    if forms:
        actions = join(
            post_button(visitor, f"{SERVERS_PATH}/{quote(name, safe='')}/restart", "Restart"),
            post_button(visitor, f"{SERVERS_PATH}/{quote(name, safe='')}/remove", "Remove"),
        )
    return tag(
        "tr",
        tag("td", tag("code", name), tag("div", *(tag("div", w, class_="muted") for w in warnings))),
        tag("td", server.get("transport", "")),
        tag("td", tag("span", state, class_="ok" if server.get("healthy") else "broken", data_state=state)),
        tag("td", str(server.get("tools", 0)), class_="num"),
        tag("td", str(server.get("calls", 0)), class_="num"),
        tag("td", str(server.get("errors", 0)), class_="num"),
        tag("td", server.get("last_error") or "—", class_="why"),
        tag("td", actions),
        data_server=name,
    )


def _add_form(visitor: Visitor | None) -> Html:
    def field(name: str, label: str) -> Html:
        return tag("label", label, tag("input", type="text", name=name, aria_label=label))

    return join(
        tag("h2", "Add a server"),
        tag(
            "form",
            csrf_input(visitor),
            field("name", "name"),
            tag(
                "select",
                tag("option", "http", value="http"),
                tag("option", "stdio", value="stdio"),
                name="transport",
                aria_label="transport",
            ),
            field("url", "URL (http)"),
            field("command", "command (stdio)"),
            field("args", "arguments (stdio, space separated)"),
            field("tenant", "tenant"),
            tag("button", "Add server", type="submit"),
            method="post",
            action=SERVERS_PATH,
            class_="filters",
            id="add-server",
        ),
    )
