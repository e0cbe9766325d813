"""Addresses of pages, built from names with `quote` so no name can break out of its path segment."""

from __future__ import annotations

from urllib.parse import quote, urlencode

from colonnade.observability.metrics import UNRESOLVED_TOOL
from colonnade.surfaces.pages.html import Html, tag
from colonnade.surfaces.pages.layout import CATALOG_PATH, TOOLS_PATH
from colonnade.surfaces.rest.views import TOOLS_PATH as REST_TOOLS_PATH

__all__ = ["api_url", "catalog_url", "tool_json_url", "tool_link", "tool_url"]


def tool_url(name: str) -> str:
    return f"{TOOLS_PATH}/{quote(name, safe=':')}"


def tool_json_url(name: str) -> str:
    """REST's `GET /v1/tools/{name}`; quoted too, as wire names from other sources are unchecked."""
    return f"{REST_TOOLS_PATH}/{quote(name, safe=':')}"


def catalog_url(*, q: str | None = None, api: str | None = None) -> str:
    params = {key: value for key, value in (("q", q), ("api", api)) if value}
    return f"{CATALOG_PATH}?{urlencode(params)}" if params else CATALOG_PATH


def api_url(api: str) -> str:
    return catalog_url(api=api)


def tool_link(name: str, label: str | None = None) -> Html:
    """A link to a tool's page; the metrics' placeholder for calls naming no tool stays plain text."""
    if name == UNRESOLVED_TOOL:
        return tag("span", name, class_="muted", title="calls that named no tool in the catalog")
    return tag("a", tag("code", label or name), href=tool_url(name))
