from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.contracts.model import Contract, ContractStatus, SideEffects
from colonnade.store import ContractConflict, ContractNotFound, ContractStore, spec_hash

MakeContract = Callable[..., Contract]


async def test_save_stores_the_document_and_its_hash(
    store: ContractStore, make_contract: MakeContract
) -> None:
    contract = make_contract()
    stored = await store.save(contract)
    expected_document = contract.model_dump(mode="json", exclude_none=True, exclude={"status"})
    canonical = json.dumps(expected_document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert stored.status is ContractStatus.PUBLISHED
    assert stored.document == expected_document
    assert stored.spec_hash == hashlib.sha256(canonical.encode()).hexdigest() == spec_hash(contract)
    assert stored.contract() == contract
    assert stored.created_at.tzinfo is not None
    assert stored.created_at == stored.updated_at


async def test_saving_identical_content_again_is_a_no_op(
    store: ContractStore, make_contract: MakeContract
) -> None:
    first = await store.save(make_contract())
    again = await store.save(make_contract())
    assert again == first
    assert len(await store.endpoints(first.id)) == 3


async def test_spec_hash_ignores_status_and_key_order(make_contract: MakeContract) -> None:
    assert spec_hash(make_contract(status="draft")) == spec_hash(make_contract(status="published"))
    assert spec_hash(make_contract(description="changed")) != spec_hash(make_contract())


async def test_changing_a_published_version_is_a_conflict(
    store: ContractStore, make_contract: MakeContract
) -> None:
    await store.save(make_contract())
    with pytest.raises(ContractConflict) as caught:
        await store.save(make_contract(description="Customers of Acme, now with more."))
    message = str(caught.value)
    assert "acme/crm 1.0.0" in message
    assert "immutable" in message
    assert "1.0.1" in message  # the suggested next version
    stored = await store.get("acme", "crm", "1.0.0")
    assert stored.document["description"] == "Customers of Acme."


async def test_changing_a_deprecated_version_is_also_a_conflict(
    store: ContractStore, make_contract: MakeContract
) -> None:
    await store.save(make_contract())
    await store.deprecate("acme", "crm", "1.0.0")
    with pytest.raises(ContractConflict, match="bump the version"):
        await store.save(make_contract(description="different"))


async def test_a_draft_can_be_replaced_and_its_endpoints_follow(
    store: ContractStore, make_contract: MakeContract
) -> None:
    draft = await store.save(make_contract(status="draft"))
    one_endpoint = [{"path": "/ping", "methods": ["GET"], "operation_id": "ping"}]
    replaced = await store.save(make_contract(status="draft", endpoints=one_endpoint))
    assert replaced.id == draft.id
    assert replaced.spec_hash != draft.spec_hash
    assert replaced.status is ContractStatus.DRAFT
    assert [(e.method, e.path) for e in await store.endpoints(draft.id)] == [("GET", "/ping")]


async def test_saving_same_content_moves_status_forward_but_never_back(
    store: ContractStore, make_contract: MakeContract
) -> None:
    await store.save(make_contract(status="draft"))
    promoted = await store.save(make_contract(status="published"))
    assert promoted.status is ContractStatus.PUBLISHED
    assert (await store.save(make_contract(status="draft"))).status is ContractStatus.PUBLISHED
    await store.deprecate("acme", "crm", "1.0.0")
    # e.g. a gateway re-reading its contract files at start-up must not undo a deprecation
    assert (await store.save(make_contract(status="published"))).status is ContractStatus.DEPRECATED


async def test_publishing_a_new_version_keeps_the_old_one(
    store: ContractStore, make_contract: MakeContract
) -> None:
    await store.save(make_contract(version="1.0.0"))
    await store.save(make_contract(version="1.1.0", status="draft", description="v1.1"))
    assert (await store.get("acme", "crm")).version == "1.0.0"
    published = await store.publish("acme", "crm", "1.1.0")
    assert published.status is ContractStatus.PUBLISHED
    assert published.updated_at >= published.created_at
    history = await store.history("acme", "crm")
    assert [(c.version, c.status) for c in history] == [
        ("1.1.0", ContractStatus.PUBLISHED),
        ("1.0.0", ContractStatus.PUBLISHED),
    ]
    assert (await store.get("acme", "crm")).version == "1.1.0"
    assert (await store.get("acme", "crm", "1.0.0")).document["description"] == "Customers of Acme."


async def test_latest_and_history_use_semver_not_string_order(
    store: ContractStore, make_contract: MakeContract
) -> None:
    for version in ["1.9.0", "1.10.0", "1.2.0", "2.0.0-rc.1", "1.10.0-beta"]:
        await store.save(make_contract(version=version, status="published"))
    assert (await store.get("acme", "crm")).version == "2.0.0-rc.1"
    await store.deprecate("acme", "crm", "2.0.0-rc.1")
    assert (await store.get("acme", "crm")).version == "1.10.0"
    versions = [c.version for c in await store.history("acme", "crm")]
    assert versions == ["2.0.0-rc.1", "1.10.0", "1.10.0-beta", "1.9.0", "1.2.0"]


async def test_deprecate_keeps_the_version_readable(
    store: ContractStore, make_contract: MakeContract
) -> None:
    await store.save(make_contract(version="1.0.0"))
    await store.save(make_contract(version="1.1.0"))
    deprecated = await store.deprecate("acme", "crm", "1.1.0")
    assert deprecated.status is ContractStatus.DEPRECATED
    assert (await store.deprecate("acme", "crm", "1.1.0")).status is ContractStatus.DEPRECATED
    assert (await store.get("acme", "crm")).version == "1.0.0"
    assert (await store.get("acme", "crm", "1.1.0")).status is ContractStatus.DEPRECATED
    reinstated = await store.publish("acme", "crm", "1.1.0")
    assert reinstated.status is ContractStatus.PUBLISHED


async def test_a_draft_cannot_be_deprecated(store: ContractStore, make_contract: MakeContract) -> None:
    await store.save(make_contract(status="draft"))
    with pytest.raises(ContractConflict, match="never published"):
        await store.deprecate("acme", "crm", "1.0.0")


async def test_missing_contracts_raise_not_found_saying_what_exists(
    store: ContractStore, make_contract: MakeContract
) -> None:
    with pytest.raises(ContractNotFound, match="no contract acme/crm in the store; publish one"):
        await store.get("acme", "crm")
    await store.save(make_contract(status="draft", version="0.9.0"))
    with pytest.raises(ContractNotFound, match=re.escape("no published version (stored: 0.9.0 draft)")):
        await store.get("acme", "crm")
    with pytest.raises(ContractNotFound, match=re.escape("has no version 2.0.0; stored versions: 0.9.0")):
        await store.publish("acme", "crm", "2.0.0")
    with pytest.raises(ContractNotFound, match="no contract acme/billing"):
        await store.deprecate("acme", "billing", "1.0.0")
    assert await store.history("acme", "billing") == []


async def test_list_filters_by_tenant_and_status(store: ContractStore, make_contract: MakeContract) -> None:
    await store.save(make_contract(version="1.0.0"))
    await store.save(make_contract(version="1.1.0", status="draft"))
    await store.save(make_contract(name="billing", version="3.0.0"))
    await store.save(make_contract(tenant="globex", version="0.1.0"))

    def keys(items: list[Any]) -> list[tuple[str, str, str]]:
        return [(c.tenant, c.name, c.version) for c in items]

    assert keys(await store.list()) == [
        ("acme", "billing", "3.0.0"),
        ("acme", "crm", "1.1.0"),
        ("acme", "crm", "1.0.0"),
        ("globex", "crm", "0.1.0"),
    ]
    assert keys(await store.list(tenant="globex")) == [("globex", "crm", "0.1.0")]
    assert keys(await store.list(status=ContractStatus.DRAFT)) == [("acme", "crm", "1.1.0")]
    assert await store.list(tenant="acme", status=ContractStatus.DEPRECATED) == []


async def test_published_contracts_gives_the_latest_published_version_of_each_api(
    store: ContractStore, make_contract: MakeContract
) -> None:
    await store.save(make_contract(version="1.9.0"))
    await store.save(make_contract(version="1.10.0"))
    await store.save(make_contract(version="2.0.0", status="draft"))
    await store.save(make_contract(name="billing", version="1.0.0"))
    await store.save(make_contract(name="billing", version="1.1.0"))
    await store.deprecate("acme", "billing", "1.1.0")
    await store.save(make_contract(tenant="globex", name="drafts", status="draft"))
    latest = await store.published_contracts()
    assert [(c.tenant, c.name, c.version) for c in latest] == [
        ("acme", "billing", "1.0.0"),
        ("acme", "crm", "1.10.0"),
    ]


async def test_endpoints_have_one_row_per_operation(
    store: ContractStore, make_contract: MakeContract
) -> None:
    stored = await store.save(make_contract())
    rows = await store.endpoints(stored.id)
    assert [(r.method, r.path, r.operation_id, r.tool_name, r.canonical_name) for r in rows] == [
        ("GET", "/customers/{customer_id}", "getCustomer", "get_customer", "acme:crm:get_customer"),
        ("GET", "/customers", "customers", "customers_get", "acme:crm:customers_get"),
        ("POST", "/customers", "customers", "customers_post", "acme:crm:customers_post"),
    ]
    assert [r.side_effects for r in rows] == [SideEffects.READ, None, None]
    assert all(r.mcp for r in rows)
    assert {r.contract_id for r in rows} == {stored.id}
    assert await store.endpoints(stored.id + 1000) == []


async def test_mcp_flag_is_stored(store: ContractStore, make_contract: MakeContract) -> None:
    hidden = [{"path": "/internal", "methods": ["GET"], "operation_id": "internal", "mcp": False}]
    stored = await store.save(make_contract(endpoints=hidden))
    assert [r.mcp for r in await store.endpoints(stored.id)] == [False]


async def test_duplicate_path_and_method_is_refused_before_writing(
    store: ContractStore, make_contract: MakeContract
) -> None:
    twice = [
        {"path": "/a", "methods": ["GET"], "operation_id": "first"},
        {"path": "/a", "methods": ["POST", "GET"], "operation_id": "second"},
    ]
    with pytest.raises(ContractConflict, match="declares GET /a more than once"):
        await store.save(make_contract(endpoints=twice))
    assert await store.list() == []


async def test_deleting_a_contract_row_cascades_to_its_endpoints(
    engine: AsyncEngine, store: ContractStore, make_contract: MakeContract
) -> None:
    stored = await store.save(make_contract())
    async with engine.begin() as connection:
        await connection.exec_driver_sql(f"DELETE FROM contracts WHERE id = {stored.id}")
    async with engine.connect() as connection:
        remaining = (await connection.exec_driver_sql("SELECT count(*) FROM endpoints")).scalar()
    assert remaining == 0


async def test_unicode_documents_round_trip(store: ContractStore, make_contract: MakeContract) -> None:
    description = "Clients de l'entreprise — 顧客管理 · Kunden 🚀 «données»"
    contract = make_contract(display_name="Café CRM ☕", description=description)
    stored = await store.save(contract)
    again = await store.get("acme", "crm", "1.0.0")
    assert again.document["description"] == description
    assert again.contract().display_name == "Café CRM ☕"
    assert again.spec_hash == stored.spec_hash == spec_hash(contract)
    assert (await store.save(contract)).id == stored.id  # same content after a round trip: no conflict


async def test_concurrent_saves_of_one_version_store_it_once(
    store: ContractStore, make_contract: MakeContract
) -> None:
    results = await asyncio.gather(*(store.save(make_contract()) for _ in range(4)))
    assert len({r.id for r in results}) == 1
    assert len(await store.list()) == 1
    assert len(await store.endpoints(results[0].id)) == 3


async def test_fingerprint_moves_with_every_publish_and_deprecation(
    store: ContractStore, make_contract: Callable[..., Contract]
) -> None:
    empty = await store.fingerprint()
    await store.save(make_contract(version="1.0.0"))
    one = await store.fingerprint()
    assert empty == frozenset() and len(one) == 1
    ((tenant, name, version, status, digest),) = one
    assert (tenant, name, version, status, len(digest)) == ("acme", "crm", "1.0.0", "published", 64)
    await store.deprecate("acme", "crm", "1.0.0")
    assert await store.fingerprint() != one
