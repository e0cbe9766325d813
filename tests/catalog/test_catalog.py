"""The catalog: versions and fallback, lookups, stable pagination, tool sources and change events."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import replace
from typing import Any

import pytest

from colonnade.catalog import (
    Catalog,
    CatalogChange,
    InvalidCursor,
    NotInCatalog,
    Tool,
    ToolConflict,
    WireNameCollision,
)
from colonnade.contracts.model import Contract
from tests.support.source_tools import source_tool


def contract(data: dict[str, Any], **changes: Any) -> Contract:
    return Contract.model_validate({**data, **changes})


def names(tools: Any) -> list[str]:
    return [tool.canonical_name for tool in tools]


def test_publish_serves_tools_sorted_and_resolves_both_names(crm: Contract) -> None:
    catalog = Catalog()
    change = catalog.publish(crm)

    assert catalog.version == 1 == change.version
    assert names(catalog.tools()) == sorted(names(catalog.tools()))
    assert len(catalog) == 12
    assert set(names(change.added)) == set(names(catalog.tools()))
    assert change.reason == "publish acme:crm@1.0.0"
    by_canonical = catalog.get("acme:crm:search_customers")
    assert by_canonical is not None
    assert catalog.get("acme__crm__search_customers") is by_canonical
    assert catalog.get("acme:crm:reindex") is None
    assert "acme__crm__get_customer" in catalog
    assert catalog.active_version("acme", "crm") == "1.0.0"


def test_bare_tool_names_are_indexed_with_each_view(crm: Contract, crm_data: dict[str, Any]) -> None:
    catalog = Catalog()
    catalog.publish(crm)
    assert names(catalog.aliased("search_customers")) == ["acme:crm:search_customers"]
    assert catalog.aliased("acme:crm:search_customers") == () and catalog.aliased("nope") == ()
    assert names(catalog.aliased("note_get")) == ["acme:crm:note_get"]  # one endpoint, two methods
    twin = contract(crm_data, name="crm-eu")
    catalog.publish(twin)
    both = ["acme:crm-eu:search_customers", "acme:crm:search_customers"]
    assert names(catalog.aliased("search_customers")) == both
    catalog.remove("acme", "crm-eu")
    assert names(catalog.aliased("search_customers")) == ["acme:crm:search_customers"]
    assert "search_customers" not in catalog  # an alias is not a name the catalog serves by itself


def test_an_llm_tool_name_shared_by_several_methods_is_borne_by_each(crm_data: dict[str, Any]) -> None:
    endpoints = [dict(e) for e in crm_data["endpoints"]]
    note = next(e for e in endpoints if e["operation_id"] == "note")
    note["llm"] = {**endpoints[0]["llm"], "tool_name": "notes", "side_effects": "write"}
    catalog = Catalog()
    catalog.publish(contract(crm_data, endpoints=endpoints))
    assert names(catalog.aliased("notes")) == ["acme:crm:notes_get", "acme:crm:notes_put"]
    assert names(catalog.aliased("notes_put")) == ["acme:crm:notes_put"]


def test_republishing_the_same_contract_changes_nothing(crm: Contract) -> None:
    catalog = Catalog()
    catalog.publish(crm)
    seen: list[CatalogChange] = []
    catalog.subscribe(seen.append)

    change = catalog.publish(crm)

    assert not change
    assert catalog.version == 1
    assert seen == []


def test_a_new_version_reports_added_removed_and_updated_tools(crm_data: dict[str, Any]) -> None:
    catalog = Catalog()
    catalog.publish(contract(crm_data))
    crm_data["endpoints"][0]["llm"]["summary"] = "Find customers by name"
    crm_data["endpoints"] = [e for e in crm_data["endpoints"] if e["operation_id"] != "retag"]
    crm_data["endpoints"].append({"path": "/export", "methods": ["POST"], "operation_id": "export"})

    change = catalog.publish(contract(crm_data, version="1.1.0"))

    assert names(change.added) == ["acme:crm:export"]
    assert names(change.removed) == ["acme:crm:retag"]
    # every tool carries the contract version, so all surviving tools count as updated
    assert "acme:crm:search_customers" in names(change.updated)
    assert len(change.updated) == 11
    assert catalog.version == 2
    tool = catalog.get("acme:crm:search_customers")
    assert tool is not None and tool.version == "1.1.0"
    assert tool.description.startswith("Find customers by name.")


def test_an_older_version_is_kept_but_not_served(crm_data: dict[str, Any]) -> None:
    catalog = Catalog()
    catalog.publish(contract(crm_data, version="1.10.0"))

    change = catalog.publish(contract(crm_data, version="1.9.0"))

    assert not change
    assert catalog.active_version("acme", "crm") == "1.10.0"
    assert [(v.version, v.active) for v in catalog.api_versions()] == [("1.9.0", False), ("1.10.0", True)]


def test_a_release_outranks_its_prerelease(crm_data: dict[str, Any]) -> None:
    catalog = Catalog()
    for version in ("2.0.0", "2.0.0-rc.2", "2.0.0-rc.10", "1.4.2"):
        catalog.publish(contract(crm_data, version=version))

    assert catalog.active_version("acme", "crm") == "2.0.0"
    assert [v.version for v in catalog.api_versions()] == ["1.4.2", "2.0.0-rc.2", "2.0.0-rc.10", "2.0.0"]


def test_deprecating_the_latest_falls_back_to_the_previous_version(crm_data: dict[str, Any]) -> None:
    catalog = Catalog()
    catalog.publish(contract(crm_data, version="1.0.0"))
    crm_data["endpoints"].append({"path": "/export", "methods": ["POST"], "operation_id": "export"})
    catalog.publish(contract(crm_data, version="1.1.0"))
    seen: list[CatalogChange] = []
    catalog.subscribe(seen.append)

    change = catalog.deprecate("acme", "crm", "1.1.0")

    assert catalog.active_version("acme", "crm") == "1.0.0"
    assert names(change.removed) == ["acme:crm:export"]
    assert change.reason == "deprecate acme:crm@1.1.0"
    assert seen == [change]
    tool = catalog.get("acme:crm:health")
    assert tool is not None and tool.version == "1.0.0"
    assert [(v.version, v.deprecated, v.active) for v in catalog.api_versions()] == [
        ("1.0.0", False, True),
        ("1.1.0", True, False),
    ]

    last = catalog.deprecate("acme", "crm", "1.0.0")
    assert len(last.removed) == 12
    assert catalog.tools() == ()
    assert catalog.active_version("acme", "crm") is None


def test_a_document_marked_deprecated_is_registered_but_not_served(crm_data: dict[str, Any]) -> None:
    catalog = Catalog()

    change = catalog.publish(contract(crm_data, status="deprecated"))

    assert not change
    assert len(catalog) == 0
    assert catalog.api_versions()[0].deprecated


def test_remove_a_version_or_a_whole_api(crm_data: dict[str, Any]) -> None:
    catalog = Catalog()
    catalog.publish(contract(crm_data, version="1.0.0"))
    catalog.publish(contract(crm_data, version="2.0.0"))

    catalog.remove("acme", "crm", "2.0.0")
    assert catalog.active_version("acme", "crm") == "1.0.0"
    change = catalog.remove("acme", "crm")
    assert len(change.removed) == 12
    assert catalog.api_versions() == []


def test_unknown_api_or_version_is_named_with_what_the_catalog_holds(crm: Contract) -> None:
    catalog = Catalog()
    catalog.publish(crm)

    with pytest.raises(NotInCatalog) as caught:
        catalog.deprecate("acme", "crm", "9.9.9")
    assert "acme:crm@9.9.9 is not in the catalog" in str(caught.value)
    assert "acme:crm@1.0.0" in caught.value.fix
    with pytest.raises(NotInCatalog):
        catalog.remove("acme", "billing")
    with pytest.raises(NotInCatalog):
        catalog.remove_source("clock")


def test_pages_cover_every_tool_once_in_order(crm: Contract) -> None:
    catalog = Catalog()
    catalog.publish(crm)
    catalog.add_tools("clocks", [source_tool(f"acme:clock:t{i:02d}") for i in range(13)])

    collected: list[Tool] = []
    cursor: str | None = None
    pages = 0
    while True:
        page, cursor = catalog.page(cursor, 10)
        collected.extend(page)
        pages += 1
        if cursor is None:
            break
    assert pages == 3
    assert collected == list(catalog.tools())
    assert catalog.page(None, 25) == (list(catalog.tools()), None)


def test_a_cursor_stays_valid_when_tools_come_and_go(crm: Contract) -> None:
    catalog = Catalog()
    catalog.publish(crm)
    first, cursor = catalog.page(None, 5)
    assert cursor is not None
    before = names(catalog.tools())

    catalog.add_tools("extra", [source_tool("aaa:x:early"), source_tool("zzz:x:late")])
    catalog.remove("acme", "crm")
    catalog.publish(crm)
    rest: list[Tool] = []
    while cursor is not None:
        page, cursor = catalog.page(cursor, 4)
        rest.extend(page)

    assert names(first) + names(rest) == [*before, "zzz:x:late"]


@pytest.mark.parametrize("cursor", ["not base64!", "YWNtZQ", "//8", "YWNtZTpjcm06eA=="])
def test_a_foreign_cursor_is_refused(cursor: str) -> None:
    catalog = Catalog()

    with pytest.raises(InvalidCursor) as caught:
        catalog.page(cursor, 10)
    assert isinstance(caught.value, ValueError)
    assert "next_cursor" in caught.value.fix


def test_page_limit_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        Catalog().page(None, 0)


def test_tool_sources_are_added_replaced_and_removed(crm: Contract) -> None:
    catalog = Catalog()
    catalog.publish(crm)

    added = catalog.add_tools("clock", [source_tool("acme:clock:now"), source_tool("acme:clock:today")])
    replaced = catalog.add_tools("clock", [source_tool("acme:clock:now", description="The time.")])
    removed = catalog.remove_source("clock")

    assert names(added.added) == ["acme:clock:now", "acme:clock:today"]
    assert (names(replaced.updated), names(replaced.removed)) == (["acme:clock:now"], ["acme:clock:today"])
    assert names(removed.removed) == ["acme:clock:now"]
    assert catalog.version == 4
    assert len(catalog) == 12


def test_a_source_tool_has_its_one_served_version(crm: Contract) -> None:
    """A call pinned to the version a source tool is served at (an approved call resumed) finds it."""
    catalog = Catalog()
    catalog.publish(crm)
    now = source_tool("acme:clock:now")
    catalog.add_tools("clock", [now, replace(source_tool("acme:clock:odd"), version="2024-05")])

    assert catalog.tool_versions("acme:clock:now") == {"1.0.0": now}
    assert catalog.tool_versions("acme__clock__now") == {"1.0.0": now}
    assert catalog.tool_versions("acme:clock:odd") == {}  # not a semantic version: nothing to pin


def test_conflicting_names_are_refused_and_leave_the_catalog_unchanged(crm: Contract) -> None:
    catalog = Catalog()
    catalog.publish(crm)
    version, tools = catalog.version, catalog.tools()

    with pytest.raises(ToolConflict) as conflict:
        catalog.add_tools("rogue", [source_tool("acme:crm:health")])
    assert "contract acme:crm@1.0.0" in str(conflict.value)
    with pytest.raises(WireNameCollision) as collision:
        catalog.add_tools("rogue", [source_tool("acme:other:health", wire="acme__crm__health")])
    assert collision.value.existing == "acme:crm:health"

    assert (catalog.version, catalog.tools()) == (version, tools)


def test_mcp_profile_catalog_resolves_dotted_wire_names(crm: Contract) -> None:
    catalog = Catalog(profile="mcp")
    catalog.publish(crm)

    tool = catalog.get("acme.crm.delete_customer")
    assert tool is not None and tool.canonical_name == "acme:crm:delete_customer"


def test_unknown_profile_fails_at_construction() -> None:
    with pytest.raises(ValueError, match="use one of mcp, strict"):
        Catalog(profile="dotted")  # type: ignore[arg-type]


def test_listeners_hear_every_change_until_they_unsubscribe(crm: Contract) -> None:
    catalog = Catalog()
    seen: list[str] = []

    def broken(change: CatalogChange) -> None:
        raise RuntimeError("listener bug")

    catalog.subscribe(broken)
    unsubscribe = catalog.subscribe(lambda change: seen.append(change.reason))
    catalog.publish(crm)
    catalog.deprecate("acme", "crm", "1.0.0")
    unsubscribe()
    catalog.remove("acme", "crm")

    assert seen == ["publish acme:crm@1.0.0", "deprecate acme:crm@1.0.0"]


async def test_async_listeners_run_on_the_loop(crm: Contract) -> None:
    catalog = Catalog()
    seen: list[tuple[int, int]] = []

    async def listener(change: CatalogChange) -> None:
        await asyncio.sleep(0)
        seen.append((change.version, len(change.added)))

    catalog.subscribe(listener)
    catalog.publish(crm)
    await catalog.drain()

    assert seen == [(1, 12)]


async def test_async_listeners_hear_changes_made_in_other_threads(crm: Contract) -> None:
    catalog = Catalog()
    heard = asyncio.Event()
    threads: list[int] = []

    async def listener(change: CatalogChange) -> None:
        threads.append(threading.get_ident())
        heard.set()

    catalog.subscribe(listener)
    await asyncio.to_thread(catalog.publish, crm)
    await asyncio.wait_for(heard.wait(), timeout=10)

    assert threads == [threading.get_ident()]
    assert len(catalog) == 12


def test_a_dotted_name_resolves_by_its_readable_wire_name_and_a_twin_is_refused() -> None:
    """`.` reads as `_` on the wire: the catalog knows which tool holds the name, and refuses a
    second tool that would meet it there (the collision check)."""
    from colonnade.catalog.naming import to_wire

    dotted = source_tool("acme:files:read.file", wire=to_wire("acme:files:read.file"))
    catalog = Catalog()
    catalog.add_tools("files", [dotted])
    found = catalog.get("acme__files__read_file")
    assert found is not None and found.canonical_name == "acme:files:read.file"
    twin = source_tool("acme:files:read_file", wire=to_wire("acme:files:read_file"))
    with pytest.raises(WireNameCollision) as collision:
        catalog.add_tools("files", [dotted, twin])
    met = (collision.value.existing, collision.value.incoming)
    assert met == ("acme:files:read.file", "acme:files:read_file")
