"""Paging over one caller's view of the catalog: full pages of visible tools, no repeats or gaps
when tools come and go between pages, and a last page that says so."""

from __future__ import annotations

from colonnade.catalog.catalog import Catalog
from colonnade.catalog.tool import Tool
from tests.support.tenant_contracts import tenant_contract


def _acme(tool: Tool) -> bool:
    return tool.tenant == "acme"


def _pages(catalog: Catalog, limit: int) -> list[list[str]]:
    pages, cursor = [], None
    while True:
        tools, cursor = catalog.page(cursor, limit, _acme)
        pages.append([tool.canonical_name for tool in tools])
        if cursor is None:
            return pages


def test_pages_hold_only_visible_tools_and_end_exactly() -> None:
    catalog = Catalog()
    for tenant, api in (("acme", "a"), ("globex", "b"), ("acme", "c"), ("globex", "d")):
        catalog.publish(tenant_contract(tenant, api, "http://127.0.0.1:9"))
    pages = _pages(catalog, 3)
    names = [name for page in pages for name in page]
    assert [len(page) for page in pages] == [3, 3, 2]  # 8 acme tools, never a globex one
    assert names == sorted(names) and all(name.startswith("acme:") for name in names)
    exact, cursor = catalog.page(None, 8, _acme)
    assert len(exact) == 8 and cursor is None  # no empty last page when the count divides evenly


def test_a_cursor_stays_valid_when_tools_come_and_go() -> None:
    catalog = Catalog()
    catalog.publish(tenant_contract("acme", "b", "http://127.0.0.1:9"))
    catalog.publish(tenant_contract("acme", "d", "http://127.0.0.1:9"))
    first, cursor = catalog.page(None, 4, _acme)
    assert [t.api for t in first] == ["b"] * 4 and cursor is not None
    catalog.publish(tenant_contract("acme", "a", "http://127.0.0.1:9"))  # lands before the cursor
    catalog.publish(tenant_contract("acme", "c", "http://127.0.0.1:9"))  # lands after it
    catalog.remove("acme", "b")
    rest, cursor = catalog.page(cursor, 100, _acme)
    assert [t.api for t in rest] == ["c"] * 4 + ["d"] * 4 and cursor is None
