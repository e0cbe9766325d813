"""The router's corpus follows the catalog: incremental updates, persistence, and reconciliation."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
import yaml

from colonnade.catalog.catalog import Catalog
from colonnade.config import Settings
from colonnade.contracts.model import Contract
from colonnade.routing.catalog_index import INDEX_FILE, MANIFEST_FILE, CatalogIndex
from colonnade.routing.index import IndexConfig
from colonnade.runtime.gateway import Gateway

ROOT = Path(__file__).resolve().parents[2]


def demo(name: str, **changes: Any) -> Contract:
    data = yaml.safe_load((ROOT / "examples" / "contracts" / f"{name}.yaml").read_text())
    data.update(changes)
    return Contract.model_validate(data)


def top(index: CatalogIndex, query: str) -> str | None:
    hits = index.corpus.search(query, 1)
    return hits[0].id if hits else None


def test_the_corpus_follows_publish_update_and_remove() -> None:
    catalog = Catalog()
    catalog.publish(demo("crm"))
    index = CatalogIndex(catalog)  # tools already in the catalog are indexed at once
    assert len(index.corpus) == 6
    catalog.publish(demo("billing"))
    assert len(index.corpus) == 11
    assert top(index, "refund a paid invoice") == "acme:billing:refund_invoice"
    assert index.corpus.doc("acme:billing:refund_invoice") is not None
    catalog.remove("acme", "billing")
    assert len(index.corpus) == 6 and len(index.corpus.index) == 6
    assert top(index, "refund a paid invoice") != "acme:billing:refund_invoice"
    renamed = demo("crm", version="1.1.0")
    endpoints = [e.model_dump(mode="json", exclude_none=True) for e in renamed.endpoints]
    endpoints[0]["llm"]["summary"] = "Look up loyalty programme members by their zodiac sign."
    catalog.publish(
        Contract.model_validate(
            {**renamed.model_dump(mode="json", exclude_none=True), "endpoints": endpoints}
        )
    )
    assert top(index, "zodiac sign") == "acme:crm:search_customers"
    index.close()
    catalog.publish(demo("billing"))
    assert len(index.corpus) == 6  # unsubscribed


def test_a_saved_index_is_reused_and_only_changes_are_indexed(tmp_path: Path) -> None:
    first = Catalog()
    index = CatalogIndex(first, directory=tmp_path)
    first.publish(demo("crm"))
    first.publish(demo("billing"))
    assert (tmp_path / INDEX_FILE).exists()  # saved after each change (no event loop: at once)
    manifest = json.loads((tmp_path / MANIFEST_FILE).read_text())
    assert len(manifest["digests"]) == 11
    index.close()

    restarted = Catalog()
    again = CatalogIndex(restarted, directory=tmp_path)
    assert len(again.corpus.index) == 11 and len(again.corpus) == 0  # loaded; no catalog tools yet
    assert again.corpus.search("refund a paid invoice", 5) == []  # unknown to the catalog: never served
    restarted.publish(demo("crm"))
    restarted.publish(demo("billing"))
    assert not again.dirty  # every document matched its saved digest: nothing was re-indexed
    assert top(again, "refund a paid invoice") == "acme:billing:refund_invoice"


def test_reconcile_drops_tools_removed_while_the_gateway_was_down(tmp_path: Path) -> None:
    catalog = Catalog()
    for name in ("crm", "billing"):
        catalog.publish(demo(name))
    CatalogIndex(catalog, directory=tmp_path).close()
    smaller = Catalog()
    smaller.publish(demo("crm"))
    index = CatalogIndex(smaller, directory=tmp_path)
    assert len(index.corpus.index) == 11
    index.reconcile()
    assert len(index.corpus.index) == 6 and index.dirty
    index.save()
    assert len(json.loads((tmp_path / MANIFEST_FILE).read_text())["digests"]) == 6


def test_a_damaged_index_or_manifest_is_rebuilt(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    catalog = Catalog()
    catalog.publish(demo("crm"))
    CatalogIndex(catalog, directory=tmp_path).save()
    (tmp_path / INDEX_FILE).write_bytes(b"not an index")
    with caplog.at_level(logging.WARNING):
        damaged = CatalogIndex(catalog, directory=tmp_path)
    assert "rebuilding" in caplog.text
    assert damaged.dirty and len(damaged.corpus) == 6
    assert top(damaged, "delete a customer") == "acme:crm:delete_customer"
    damaged.save()
    (tmp_path / MANIFEST_FILE).write_text(json.dumps({"format": "other", "digests": {}}))
    foreign = CatalogIndex(catalog, directory=tmp_path, config=IndexConfig(k1=IndexConfig().k1 + 0.5))
    assert foreign.dirty and top(foreign, "delete a customer") == "acme:crm:delete_customer"


async def test_changes_are_saved_in_the_background_on_a_running_loop(tmp_path: Path) -> None:
    catalog = Catalog()
    index = CatalogIndex(catalog, directory=tmp_path)
    catalog.publish(demo("billing"))
    await catalog.drain()
    assert not index.dirty
    assert len(json.loads((tmp_path / MANIFEST_FILE).read_text())["digests"]) == 5


async def test_the_gateway_routes_over_its_catalog_and_persists_the_index(tmp_path: Path) -> None:
    settings = Settings.model_validate(
        {
            "data_dir": tmp_path / "data",
            "contracts": [ROOT / "examples" / "contracts"],
            "routing": {"enabled": True},
        }
    )
    gateway = await Gateway.open(settings)
    try:
        decision = gateway.router.route("refund a paid invoice")
        assert decision.selected[0] == "acme:billing:refund_invoice"
        assert "search_tools" in gateway.builtins and gateway.mcp.routing is not None
    finally:
        await gateway.aclose()
    assert (settings.data_dir / "routing" / INDEX_FILE).exists()
    disabled = await Gateway.open(
        settings.model_copy(update={"routing": settings.routing.model_copy(update={"enabled": False})})
    )
    try:
        assert "search_tools" not in disabled.builtins and disabled.mcp.routing is None
        assert not disabled.tool_index.dirty  # reloaded from disk, nothing re-indexed
    finally:
        await disabled.aclose()
