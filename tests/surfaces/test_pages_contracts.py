"""`/ui/contracts` on a governed gateway: publish, deprecate and undeploy through the platform's tools.

A product owner of team-a pastes a new contract (served at once, its tools in the catalog),
deprecates it (no longer served) and asks to undeploy an API (destructive: it parks for approval,
and the API is still served). A consumer's publish is refused (the tool is not for its persona, so
it is unknown to it); a document that is not YAML is a 400 that says where, before any call.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx2
import pytest
import yaml

from tests.support.governed import Governed, governed_gateway
from tests.support.page_login import csrf_token, person
from tests.support.tenant_contracts import tenant_contract


@pytest.fixture(scope="module")
def governed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Governed]:
    with governed_gateway(tmp_path_factory.mktemp("pages-contracts")) as running:
        yield running


def post(client: httpx2.Client, path: str, **fields: str) -> httpx2.Response:
    return client.post(path, data={"csrf_token": csrf_token(client.get("/ui/contracts").text), **fields})


def status_of(body: str) -> str:
    found = re.search(r'id="call-result" data-status="(\w+)"', body)
    assert found is not None, body[-3000:]
    return found.group(1)


def served(governed: Governed, api: str) -> bool:
    return any(t.canonical_name.startswith(f"{api}:") for t in governed.running.gateway.catalog.tools())


def notes_contract(governed: Governed) -> str:
    backend = governed.running.gateway.settings.contracts[0]
    base_url = yaml.safe_load(backend.read_text())["backend"]["base_url"]
    document = tenant_contract("acme", "notes", base_url).model_dump(mode="json", exclude_none=True)
    return yaml.safe_dump(document, sort_keys=False)


def test_a_product_owner_publishes_then_deprecates(governed: Governed) -> None:
    with person(governed, "owen", "product_owner", team="team-a") as owen:
        page = owen.get("/ui/contracts")
        assert (
            page.status_code == 200 and 'data-api="acme:items"' in page.text and 'id="publish"' in page.text
        )
        published = post(owen, "/ui/contracts/publish", contract=notes_contract(governed))
        assert status_of(published.text) == "success" and 'data-api="acme:notes"' in published.text
        assert served(governed, "acme:notes")
        deprecated = post(owen, "/ui/contracts/deprecate", api="acme:notes", version="1.0.0")
        assert status_of(deprecated.text) == "success"
    assert not served(governed, "acme:notes")


def test_undeploying_waits_for_approval(governed: Governed) -> None:
    with person(governed, "owen", "product_owner", team="team-a") as owen:
        asked = post(owen, "/ui/contracts/undeploy", api="acme:lab")
    assert status_of(asked.text) == "pending" and 'href="/ui/approvals"' in asked.text
    assert served(governed, "acme:lab")


def test_a_consumer_cannot_publish_and_bad_yaml_is_refused_before_a_call(governed: Governed) -> None:
    with person(governed, "erin", "consumer") as erin:
        refused = post(
            erin, "/ui/contracts/publish", contract=notes_contract(governed).replace("notes", "erins")
        )
        bad = post(erin, "/ui/contracts/publish", contract="name: [unclosed")
    # A persona the tool is not for does not see it: answered as an unknown tool (docs/platform-tools.md).
    assert status_of(refused.text) == "invalid_request" and "I-REQ-UNKNOWN-TOOL" in refused.text
    assert not served(governed, "acme:erins")
    assert bad.status_code == 400 and "does not parse as YAML at line 1" in bad.text
