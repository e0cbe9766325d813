"""`/ui/access` on a governed gateway: keys, agents and subscriptions changed through the pages.

Every form calls the governance service REST calls (so the same scopes, tenants and audit hold);
the tests check what the gateway then does with the result: a key made on the page authenticates
and its secret is shown once, a revoked key is refused, an agent registered there is listed, a
consumer's request becomes its subscription, a consumer cannot make keys, and a forged form
changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx2
import pytest

from colonnade.governance.audit import EventKind
from tests.support.governed import Governed, governed_gateway
from tests.support.page_login import csrf_token, person


@pytest.fixture(scope="module")
def governed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Governed]:
    with governed_gateway(
        tmp_path_factory.mktemp("pages-access"), subscription_approval=["acme:lab"]
    ) as running:
        yield running


def post(client: httpx2.Client, path: str, **fields: str) -> httpx2.Response:
    token = csrf_token(client.get("/ui/access").text)
    return client.post(path, data={"csrf_token": token, **fields})


def secret_of(body: str) -> str | None:
    found = re.search(r'<pre id="new-key"><code>([^<]+)</code></pre>', body)
    return found.group(1) if found else None


def key_row(body: str, key_id: str) -> str:
    found = re.search(rf'<tr data-key="{key_id}">.*?</tr>', body, re.S)
    assert found is not None, f"key {key_id} is not on the page"
    return found.group(0)


def tools_status(governed: Governed, key: str) -> int:
    with governed.rest(key) as client:
        return client.get("/v1/tools").status_code


def _audited(governed: Governed, kind: EventKind) -> list[object]:
    audit = governed.running.gateway.governance.audit
    assert audit is not None
    return [e for e in governed.running.run(audit.store.scan()) if e.kind == kind.value]


def test_a_key_made_on_the_page_works_is_shown_once_and_can_be_revoked(governed: Governed) -> None:
    with person(governed, "alice") as alice:
        made = post(alice, "/ui/access/keys", owner="carol", persona="developer", label="ci")
        assert made.status_code == 303 and made.headers["location"] == "/ui/access?done=key-created"
        page = alice.get("/ui/access?done=key-created").text
        secret = secret_of(page)
        assert secret is not None and "Key created." in page
        assert secret_of(alice.get("/ui/access").text) is None  # shown once
        key_id = re.findall(r'<tr data-key="([^"]+)">', page)[-1]
        assert "carol" in key_row(page, key_id) and "developer" in key_row(page, key_id)
        assert tools_status(governed, secret) == 200

        rotated = post(alice, f"/ui/access/keys/{key_id}/rotate")
        assert rotated.status_code == 303
        fresh = secret_of(alice.get("/ui/access").text)
        assert fresh is not None and fresh != secret and tools_status(governed, fresh) == 200

        new_id = re.findall(r'<tr data-key="([^"]+)">', alice.get("/ui/access").text)[-1]
        assert post(alice, f"/ui/access/keys/{new_id}/revoke").status_code == 303
        assert "revoked" in key_row(alice.get("/ui/access").text, new_id)
    assert tools_status(governed, fresh) == 401
    assert _audited(governed, EventKind.KEY_CREATE) and _audited(governed, EventKind.KEY_REVOKE)


def test_a_bad_lifetime_is_refused_with_what_to_fix(governed: Governed) -> None:
    with person(governed, "alice") as alice:
        refused = post(alice, "/ui/access/keys", owner="dan", persona="developer", expires_in_days="soon")
    assert refused.status_code == 400 and "expires in days is a number above 0" in refused.text


def test_an_agent_registered_on_the_page_is_listed_then_revoked(governed: Governed) -> None:
    with person(governed, "alice") as alice:
        made = post(alice, "/ui/access/agents", agent_id="pager-bot", allowed_tools="acme:items:*")
        assert made.status_code == 303, made.text
        row = re.search(r'<tr data-agent="pager-bot">.*?</tr>', alice.get("/ui/access").text, re.S)
        assert row is not None and "acme:items:*" in row.group(0)
        assert post(alice, "/ui/access/agents/pager-bot/revoke").status_code == 303
        row = re.search(r'<tr data-agent="pager-bot">.*?</tr>', alice.get("/ui/access").text, re.S)
    assert row is not None and "revoked" in row.group(0)


def test_a_consumer_requests_a_subscription_and_makes_no_keys(governed: Governed) -> None:
    with person(governed, "erin", persona="consumer") as erin:
        page = erin.get("/ui/access").text
        assert 'data-refused="keys"' in page and 'id="create-key"' not in page
        asked = post(erin, "/ui/access/subscriptions", api="acme:items")
        assert asked.status_code == 303, asked.text
        mine = re.findall(r'<tr data-subscription="[^"]+">.*?</tr>', erin.get("/ui/access").text, re.S)
        refused = post(erin, "/ui/access/keys", owner="erin", persona="consumer")
    assert len(mine) == 1 and "acme:items" in mine[0] and "user:erin" in mine[0]
    assert refused.status_code == 403 and "A-AUTH-" in refused.text


def test_a_product_owner_approves_a_subscription_on_the_page(governed: Governed) -> None:
    def states(client: httpx2.Client) -> dict[str, str]:
        rows = re.findall(r'<tr data-subscription="([^"]+)">(.*?)</tr>', client.get("/ui/access").text, re.S)
        return {sid: re.search(r'data-state="(\w+)"', row).group(1) for sid, row in rows if "acme:lab" in row}  # type: ignore[union-attr]

    with (
        person(governed, "fay", persona="consumer") as fay,
        person(governed, "owen", "product_owner", team="team-a") as owen,
    ):
        assert post(fay, "/ui/access/subscriptions", api="acme:lab").status_code == 303
        ((sid, state),) = states(fay).items()
        assert state == "pending"
        assert post(fay, f"/ui/access/subscriptions/{sid}/approve").status_code == 403  # not its owner
        assert post(owen, f"/ui/access/subscriptions/{sid}/approve").status_code == 303
        assert states(fay) == {sid: "active"}


def test_a_forged_form_changes_nothing(governed: Governed) -> None:
    with person(governed, "alice") as alice:
        before = alice.get("/ui/access").text.count("<tr data-key=")
        for fields in ({}, {"csrf_token": "guessed"}):
            response = alice.post("/ui/access/keys", data={**fields, "owner": "mallory", "persona": "admin"})
            assert response.status_code == 403 and "A-AUTH-CSRF" in response.text
        assert alice.get("/ui/access").text.count("<tr data-key=") == before
