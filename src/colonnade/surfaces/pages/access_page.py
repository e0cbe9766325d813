"""`/ui/access`: API keys, agents and subscriptions, with the forms that change them.

Each section shows what the governance services let the visitor see (a consumer its own
subscriptions, an administrator its tenant's keys and agents) and the forms of what it may try; the
services decide, so a form the visitor may not use is refused with the same registry code as REST.
A key's secret is shown once, on the page right after it is made or rotated.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from colonnade.surfaces.pages.html import Child, Html, join, tag
from colonnade.surfaces.pages.layout import ACCESS_PATH, Visitor, csrf_input, document, post_button

__all__ = ["ACCESS_PATH", "AccessListing", "access_page", "access_url"]

_SECTION = "Access"
_PERSONAS = ("consumer", "developer", "product_owner", "security", "admin")


def access_url(*parts: str) -> str:
    return "/".join([ACCESS_PATH, *(quote(part, safe="") for part in parts)])


@dataclass(slots=True)
class AccessListing:
    """What one visitor may see of each kind; `None` with a reason where the service refused."""

    keys: list[dict[str, Any]] | None = None
    agents: list[dict[str, Any]] | None = None
    subscriptions: list[dict[str, Any]] | None = None
    refused: dict[str, str] = field(default_factory=dict)


def access_page(
    listing: AccessListing, *, visitor: Visitor | None, notice: Child = None, secret: str | None = None
) -> Html:
    can_post = visitor is not None and visitor.csrf_token is not None
    return document(
        "Access",
        tag("h1", "Access"),
        tag(
            "p",
            "API keys, agents and subscriptions, as the gateway's rules let you see and change them "
            "(the same rules as REST, the CLI and the platform tools; every change is audited).",
            class_="muted",
        ),
        notice,
        _secret(secret) if secret is not None else None,
        None if can_post else tag("p", "Log in to change anything here.", class_="muted", id="read-only"),
        _keys(listing, visitor, can_post),
        _agents(listing, visitor, can_post),
        _subscriptions(listing, visitor, can_post),
        section=_SECTION,
        visitor=visitor,
    )


def _secret(secret: str) -> Html:
    return tag(
        "div",
        tag(
            "p",
            tag("strong", "The new key, shown this once:"),
            " copy it now; the gateway keeps only its hash.",
        ),
        tag("pre", tag("code", secret), id="new-key"),
        class_="note",
    )


def _refused(listing: AccessListing, kind: str) -> Html | None:
    reason = listing.refused.get(kind)
    return tag("p", reason, class_="muted", data_refused=kind) if reason else None


def _table(headings: Sequence[str], rows: Sequence[Html], empty: str) -> Html:
    if not rows:
        return tag("p", empty, class_="muted")
    return tag("table", tag("tr", *(tag("th", h) for h in headings)), *rows)


def _keys(listing: AccessListing, visitor: Visitor | None, can_post: bool) -> Html:
    rows = [
        tag(
            "tr",
            tag("td", tag("code", key["id"])),
            tag("td", key.get("owner", "")),
            tag("td", key.get("persona", "")),
            tag("td", key.get("label") or "—"),
            tag("td", _state(key)),
            tag("td", _key_forms(key, visitor) if can_post and not key.get("revoked_at") else None),
            data_key=key["id"],
        )
        for key in listing.keys or []
    ]
    form = None
    if can_post and listing.keys is not None:
        form = tag(
            "form",
            csrf_input(visitor),
            _field("owner", "owner (user id)", required=True),
            tag(
                "select",
                *(tag("option", p, value=p) for p in _PERSONAS),
                name="persona",
                aria_label="persona",
            ),
            _field("label", "label"),
            _field("expires_in_days", "expires in days", type_="number"),
            tag("button", "Create key", type="submit"),
            method="post",
            action=access_url("keys"),
            class_="filters",
            id="create-key",
        )
    body = _table(("Key", "Owner", "Persona", "Label", "State", ""), rows, "No API key you may see.")
    return tag("section", tag("h2", "API keys"), _refused(listing, "keys") or join(body, form), id="keys")


def _key_forms(key: Mapping[str, Any], visitor: Visitor | None) -> Html:
    return join(
        post_button(visitor, access_url("keys", key["id"], "rotate"), "Rotate"),
        post_button(visitor, access_url("keys", key["id"], "revoke"), "Revoke"),
    )


def _state(record: Mapping[str, Any]) -> str:
    if record.get("revoked_at"):
        return f"revoked {record['revoked_at']}"
    if record.get("expires_at"):
        return f"active until {record['expires_at']}"
    return "active"


def _agents(listing: AccessListing, visitor: Visitor | None, can_post: bool) -> Html:
    rows = [
        tag(
            "tr",
            tag("td", tag("code", agent["id"])),
            tag("td", agent.get("owner", "")),
            tag("td", tag("code", ", ".join(agent.get("allowed_tools", [])))),
            tag("td", _state(agent)),
            tag(
                "td",
                post_button(visitor, access_url("agents", agent["id"], "revoke"), "Revoke")
                if can_post and not agent.get("revoked_at")
                else None,
            ),
            data_agent=agent["id"],
        )
        for agent in listing.agents or []
    ]
    form = None
    if can_post and listing.agents is not None:
        form = tag(
            "form",
            csrf_input(visitor),
            _field("agent_id", "agent id"),
            _field("allowed_tools", "allowed tools (comma separated, globs)", required=True),
            _field("owner", "owner"),
            tag("button", "Register agent", type="submit"),
            method="post",
            action=access_url("agents"),
            class_="filters",
            id="register-agent",
        )
    body = _table(("Agent", "Owner", "Allowed tools", "State", ""), rows, "No agent you may see.")
    return tag("section", tag("h2", "Agents"), _refused(listing, "agents") or join(body, form), id="agents")


def _subscriptions(listing: AccessListing, visitor: Visitor | None, can_post: bool) -> Html:
    rows = [
        tag(
            "tr",
            tag("td", tag("code", record["id"])),
            tag("td", record.get("subscriber", "")),
            tag("td", tag("code", f"{record.get('tenant', '')}:{record.get('api', '')}")),
            tag(
                "td", tag("span", record.get("state", ""), class_="badge", data_state=record.get("state", ""))
            ),
            tag("td", _subscription_forms(record, visitor) if can_post else None),
            data_subscription=record["id"],
        )
        for record in listing.subscriptions or []
    ]
    form = None
    if can_post and listing.subscriptions is not None:
        form = tag(
            "form",
            csrf_input(visitor),
            _field("api", "API (tenant:api)", required=True),
            tag("button", "Request subscription", type="submit"),
            method="post",
            action=access_url("subscriptions"),
            class_="filters",
            id="request-subscription",
        )
    body = _table(("Subscription", "Subscriber", "API", "State", ""), rows, "No subscription you may see.")
    section = _refused(listing, "subscriptions") or join(body, form)
    return tag("section", tag("h2", "Subscriptions"), section, id="subscriptions")


def _subscription_forms(record: Mapping[str, Any], visitor: Visitor | None) -> Html | None:
    state, sid = record.get("state"), record["id"]
    if state == "pending":
        return join(
            post_button(visitor, access_url("subscriptions", sid, "approve"), "Approve"),
            post_button(visitor, access_url("subscriptions", sid, "reject"), "Reject"),
            post_button(visitor, access_url("subscriptions", sid, "revoke"), "Withdraw"),
        )
    if state == "active":
        return post_button(visitor, access_url("subscriptions", sid, "revoke"), "Revoke")
    return None


def _field(name: str, label: str, *, required: bool = False, type_: str = "text") -> Html:
    return tag(
        "label",
        label,
        tag("input", type=type_, name=name, required=required or None, aria_label=label),
    )
