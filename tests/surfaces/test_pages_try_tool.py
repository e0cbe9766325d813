"""The tool page's "try this tool" form on a governed gateway: one call as the visitor, through the pipeline.

The fault backend's ledger proves what ran: a read answers with the item; a write is a dry run unless
unticked, and the same form sent twice writes once (its idempotency key); an approval-gated tool
parks; a consumer without a subscription is refused; bad JSON is a clear error; a forged form runs
nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import httpx2
import pytest

from tests.support.governed import Governed, governed_gateway
from tests.support.page_login import csrf_token, form_token, person


@pytest.fixture(scope="module")
def governed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Governed]:
    with governed_gateway(tmp_path_factory.mktemp("pages-try")) as running:
        yield running


def form_of(client: httpx2.Client, tool: str) -> dict[str, str]:
    page = client.get(f"/ui/tools/{tool}")
    assert page.status_code == 200 and 'id="try"' in page.text, page.text[-2000:]
    return {"csrf_token": csrf_token(page.text), "idempotency_key": form_token(page.text, "idempotency_key")}


def envelope(body: str) -> dict[str, object]:
    found = re.search(r'<pre class="envelope" id="call-envelope"><code>(.*?)</code></pre>', body, re.S)
    assert found is not None, "no envelope on the page"
    text = (
        found.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">").replace("&#x27;", "'")
    )
    return dict(json.loads(text.replace("&amp;", "&")))


def puts(governed: Governed, item: str) -> int:
    return sum(1 for e in governed.effects() if e["kind"] == "put" and e["item_id"] == item)


def test_a_read_runs_as_the_visitor_and_shows_its_envelope(governed: Governed) -> None:
    with person(governed, "alice") as alice:
        tried = alice.post(
            "/ui/try/acme:items:read_item",
            data={**form_of(alice, "acme:items:read_item"), "arguments": '{"item_id": "I-1"}'},
        )
    assert tried.status_code == 200
    result = envelope(tried.text)
    assert result["status"] == "success" and result["output"] == {"id": "I-1", "value": "one"}
    assert 'id="try"' in tried.text  # the form again, for another try


def test_a_write_is_a_dry_run_by_default_and_a_resent_form_writes_once(governed: Governed) -> None:
    with person(governed, "alice") as alice:
        page = alice.get("/ui/tools/acme:items:write_item").text
        assert re.search(r'<input type="checkbox" name="dry_run" value="1" checked>', page)
        fields = form_of(alice, "acme:items:write_item")
        dry = alice.post(
            "/ui/try/acme:items:write_item",
            data={**fields, "arguments": '{"item_id": "T-1", "value": "x"}', "dry_run": "1"},
        )
        assert dry.status_code == 200 and puts(governed, "T-1") == 0, dry.text[-1500:]
        fields = form_of(alice, "acme:items:write_item")
        sent = {**fields, "arguments": '{"item_id": "T-2", "value": "y"}'}
        first = envelope(alice.post("/ui/try/acme:items:write_item", data=sent).text)
        again = envelope(alice.post("/ui/try/acme:items:write_item", data=sent).text)
    assert first["status"] == "success" and again["status"] == "success"
    assert puts(governed, "T-2") == 1


def test_an_approval_gated_tool_parks(governed: Governed) -> None:
    with person(governed, "alice") as alice:
        fields = form_of(alice, "acme:items:drop_item")
        tried = alice.post("/ui/try/acme:items:drop_item", data={**fields, "arguments": '{"item_id": "I-2"}'})
    assert envelope(tried.text)["status"] == "pending" and 'href="/ui/approvals"' in tried.text
    assert not [e for e in governed.effects() if e["kind"] == "drop"]


def test_refusals_and_bad_input_are_shown_and_run_nothing(governed: Governed) -> None:
    with person(governed, "erin", persona="consumer") as erin:
        fields = form_of(erin, "acme:items:read_item")
        refused = erin.post(
            "/ui/try/acme:items:read_item", data={**fields, "arguments": '{"item_id": "I-1"}'}
        )
        bad = erin.post("/ui/try/acme:items:read_item", data={**fields, "arguments": '{"item_id": '})
        forged = erin.post("/ui/try/acme:items:read_item", data={"arguments": "{}"})
    error = envelope(refused.text)["error"]
    assert isinstance(error, dict) and str(error["code"]).startswith("A-AUTH-")
    assert bad.status_code == 400 and "The arguments are not JSON" in bad.text
    assert forged.status_code == 403 and "A-AUTH-CSRF" in forged.text
