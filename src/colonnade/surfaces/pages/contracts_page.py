"""`/ui/contracts`: the APIs the visitor may see, with the forms that publish, deprecate and undeploy.

Every read and change is a call of a platform tool (`colonnade__list_apis`, `create_api`,
`deprecate_api`, `undeploy_api`) through the pipeline as the visitor, so personas, scopes, tenants,
approvals (undeploying is destructive: it parks) and the audit decide exactly as over MCP and REST.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

from colonnade.surfaces.pages.html import Child, Html, join, tag
from colonnade.surfaces.pages.layout import CONTRACTS_PATH, Visitor, csrf_input, document

__all__ = ["contracts_page"]


def contracts_page(
    apis: Sequence[Mapping[str, Any]] | None,
    *,
    visitor: Visitor | None,
    notice: Child = None,
    problem: str | None = None,
    contract_text: str = "",
) -> Html:
    """`apis` is `list_apis`'s answer (None with `problem` when it could not be read)."""
    can_post = visitor is not None and visitor.csrf_token is not None
    if apis is None:
        listing: Html = tag("p", problem or "The APIs could not be read.", class_="error", id="error")
    elif not apis:
        listing = tag("p", "No API you may see.", class_="muted", id="none")
    else:
        head = tag("tr", *(tag("th", h) for h in ("API", "Served", "Versions", "Owner", "")))
        listing = tag("table", head, *(_row(api, visitor, can_post) for api in apis), id="apis")
    return document(
        "Contracts",
        tag("h1", "Contracts"),
        tag(
            "p",
            "Each change here is a call of the platform's tools as you, through the gateway's rules; "
            "undeploying an API waits for a person's approval.",
            class_="muted",
        ),
        notice,
        listing,
        _publish(visitor, contract_text)
        if can_post
        else tag("p", "Log in to change contracts.", class_="muted"),
        section="Contracts",
        visitor=visitor,
    )


def _row(api: Mapping[str, Any], visitor: Visitor | None, can_post: bool) -> Html:
    key = str(api["api"])
    versions = [str(v) for v in api.get("versions", [])]
    forms = None
    if can_post:
        deprecate = tag(
            "form",
            csrf_input(visitor),
            tag("input", type="hidden", name="api", value=key),
            tag(
                "select", *(tag("option", v, value=v) for v in versions), name="version", aria_label="version"
            ),
            tag("button", "Deprecate", type="submit"),
            method="post",
            action=f"{CONTRACTS_PATH}/deprecate",
            class_="decide",
        )
        undeploy = tag(
            "form",
            csrf_input(visitor),
            tag("input", type="hidden", name="api", value=key),
            tag("button", "Undeploy (asks for approval)", type="submit"),
            method="post",
            action=f"{CONTRACTS_PATH}/undeploy",
            class_="decide",
        )
        forms = join(deprecate, undeploy)
    return tag(
        "tr",
        tag("td", tag("a", key, href=f"/ui/catalog?api={quote(key, safe=':')}")),
        tag("td", api.get("active_version") or "—"),
        tag("td", ", ".join(versions)),
        tag("td", api.get("owner") or "—"),
        tag("td", forms),
        data_api=key,
    )


def _publish(visitor: Visitor | None, text: str) -> Html:
    return join(
        tag("h2", "Publish a contract"),
        tag(
            "form",
            csrf_input(visitor),
            tag(
                "label",
                "The contract (UAC, YAML or JSON)",
                tag("textarea", text, name="contract", rows=14, cols=90),
            ),
            tag("button", "Publish", type="submit"),
            method="post",
            action=f"{CONTRACTS_PATH}/publish",
            class_="try",
            id="publish",
        ),
    )
