"""`/ui/audit` on a governed gateway: filters, paging, tenant isolation, the chain's status.

Records come from real calls through the pipeline (REST, with the test issuer's tokens); the
chain status is `verify_chain`'s, so a record changed in the database shows as a broken link.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from sqlalchemy import text

from tests.support.governed import Governed, governed_gateway
from tests.support.page_login import log_in, page_client

READ = "acme:items:read_item"


@pytest.fixture(scope="module")
def governed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Governed]:
    with governed_gateway(tmp_path_factory.mktemp("pages-audit")) as running:
        for number in range(56):
            status, body = running.call(running.token("admin"), READ, item_id=f"i{number}")
            assert status == 200, body
        running.call(running.token("admin"), READ)  # invalid_request: no item_id
        status, _ = running.call(
            running.token("admin", tenant="globex"), "globex:items:read_item", item_id="g"
        )
        assert status == 200
        yield running


@pytest.fixture
def operator(governed: Governed) -> Iterator[httpx2.Client]:
    """An administrator bound to no tenant, logged in to the pages."""
    with page_client(governed.base_url) as client:
        assert log_in(client, governed.token("admin", tenant=None, sub="root")).status_code == 303
        yield client


def seqs(body: str) -> list[int]:
    return [int(seq) for seq in re.findall(r'<tr data-seq="(\d+)"', body)]


def test_the_audit_page_is_linked_and_shows_the_newest_records_first(operator: httpx2.Client) -> None:
    catalog = operator.get("/ui/catalog").text
    assert '<a href="/ui/audit">Audit</a>' in catalog
    page = operator.get("/ui/audit")
    assert page.status_code == 200
    shown = seqs(page.text)
    assert len(shown) == 50 and shown == sorted(shown, reverse=True)
    assert 'id="older"' in page.text and 'id="newest"' not in page.text


def test_older_records_continue_below_the_last_one_shown(operator: httpx2.Client) -> None:
    first = operator.get("/ui/audit").text
    older = re.search(r'<a href="([^"]+)" id="older">', first)
    assert older is not None
    second = operator.get(older.group(1).replace("&amp;", "&")).text
    assert seqs(second) and max(seqs(second)) == min(seqs(first)) - 1
    assert 'id="newest"' in second


def test_filters_narrow_by_tool_outcome_and_principal(operator: httpx2.Client) -> None:
    page = operator.get("/ui/audit", params={"tool": READ, "outcome": "invalid_request"}).text
    rows = re.findall(r'<tr data-seq="\d+" data-kind="call">(.*?)</tr>', page, re.DOTALL)
    assert len(rows) == 1 and "I-REQ-SCHEMA" in rows[0]
    assert 'value="invalid_request"' in page  # the form keeps the filters
    nobody = operator.get("/ui/audit", params={"principal": "user:nobody"}).text
    assert seqs(nobody) == [] and "No audit record matches" in nobody
    by_admin = operator.get("/ui/audit", params={"principal": "user:admin-1", "kind": "call"}).text
    assert len(seqs(by_admin)) == 50


def test_a_time_range_selects_records_inside_it(operator: httpx2.Client) -> None:
    future = operator.get("/ui/audit", params={"since": "2999-01-01T00:00"}).text
    assert seqs(future) == []
    past = operator.get("/ui/audit", params={"until": "2000-01-01T00:00"}).text
    assert seqs(past) == []
    now = operator.get("/ui/audit", params={"since": "2000-01-01T00:00", "until": "2999-01-01T00:00"}).text
    assert len(seqs(now)) == 50


def test_a_bad_filter_says_which_and_how_to_write_it(operator: httpx2.Client) -> None:
    response = operator.get("/ui/audit", params={"since": "yesterday"})
    assert response.status_code == 400
    assert "since: &#x27;yesterday&#x27; is not a time; write it as YYYY-MM-DDTHH:MM (UTC)" in response.text
    assert operator.get("/ui/audit", params={"before": "-3"}).status_code == 400
    typo = operator.get("/ui/audit", params={"kind": "aproval.approve"})
    assert typo.status_code == 400
    said = typo.text.replace("&#x27;", "'")
    assert "kind: 'aproval.approve' is not an audit kind (did you mean 'approval.approve'?)" in said


def test_the_chain_status_is_intact_with_its_head(operator: httpx2.Client) -> None:
    page = operator.get("/ui/audit").text
    status = re.search(r'<p id="chain">(.*?)</p>', page, re.DOTALL)
    assert status is not None and "Chain intact" in status.group(1) and "records, head" in status.group(1)


def test_a_reader_of_one_tenant_sees_only_its_records(governed: Governed) -> None:
    with page_client(governed.base_url) as client:
        assert log_in(client, governed.token("security", tenant="globex")).status_code == 303
        page = client.get("/ui/audit", params={"kind": "call"}).text
    tenants = set(re.findall(r"<td>(acme|globex)</td>", page))
    assert tenants == {"globex"} and "records of tenant globex" in page
    assert "records, head" not in page  # the whole log's size is not a tenant's business


def test_a_principal_without_a_log_scope_is_refused(governed: Governed) -> None:
    with page_client(governed.base_url) as client:
        assert log_in(client, governed.token("consumer")).status_code == 303
        response = client.get("/ui/audit")
    assert response.status_code == 403 and "colonnade:logs:functional" in response.text
    assert not seqs(response.text)


def test_a_changed_record_shows_as_a_broken_chain(tmp_path: Path) -> None:
    with governed_gateway(tmp_path) as governed:
        for number in range(3):
            governed.call(governed.token("admin"), READ, item_id=f"t{number}")
        engine = governed.running.gateway.engine
        assert engine is not None

        async def tamper() -> None:
            async with engine.begin() as conn:
                await conn.execute(text("UPDATE audit_records SET outcome = 'success' WHERE seq = 2"))

        governed.running.run(tamper())
        with page_client(governed.base_url) as client:
            log_in(client, governed.token("admin", tenant=None))
            page = client.get("/ui/audit").text
    status = re.search(r'<p id="chain" class="error">(.*?)</p>', page, re.DOTALL)
    assert status is not None and "Chain broken" in status.group(1)
    assert "at record 2: its fields do not match its hash" in status.group(1)
