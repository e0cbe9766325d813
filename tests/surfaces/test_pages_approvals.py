"""`/ui/approvals` on a governed gateway: the queue, four-eyes, CSRF, and decisions that reach the backend.

A destructive tool (`drop_item`, approval-gated) asked over REST parks a call; approvers decide
through the page's forms, which call the same desk as REST. The fault backend's ledger proves
what ran: nothing before an approval, once after it, never after a denial or a forged form.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

import httpx2
import pytest

from tests.support.governed import Governed, governed_gateway
from tests.support.page_login import csrf_token, log_in, page_client

DROP = "acme:items:drop_item"


@pytest.fixture(scope="module")
def governed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Governed]:
    with governed_gateway(tmp_path_factory.mktemp("pages-approvals")) as running:
        yield running


def ask(governed: Governed, item: str, sub: str = "alice") -> str:
    status, result = governed.call(governed.token("admin", sub=sub), DROP, item_id=item)
    assert status == 200 and result["status"] == "pending", result
    return str(result["pending"]["token"])


def drops(governed: Governed, item: str) -> int:
    return sum(1 for e in governed.effects() if e["kind"] == "drop" and e["item_id"] == item)


@contextmanager
def person(
    governed: Governed, sub: str, persona: str = "admin", tenant: str = "acme"
) -> Iterator[httpx2.Client]:
    """A page client logged in as `sub`."""
    with page_client(governed.base_url) as client:
        assert log_in(client, governed.token(persona, sub=sub, tenant=tenant)).status_code == 303
        yield client


def card(body: str, approval: str) -> str:
    found = re.search(rf'<section class="approval" data-approval="{approval}".*?</section>', body, re.DOTALL)
    assert found is not None, f"approval {approval} is not on the page"
    return found.group(0)


def test_the_queue_shows_what_an_approver_needs_to_decide(governed: Governed) -> None:
    approval = ask(governed, "Q-1")
    with person(governed, "bob") as bob:
        page = bob.get("/ui/approvals")
    assert page.status_code == 200
    shown = card(page.text, approval)
    assert DROP in shown and "&quot;item_id&quot;: &quot;Q-1&quot;" in shown
    assert "user:alice" in shown and 'data-state="pending"' in shown
    assert "<dt>Why approval</dt><dd><ul" in shown and re.search(r"Expires</dt><dd>[^<]+ \(in \d+ min", shown)
    assert shown.count('name="csrf_token"') == 1 and "/approve" in shown and "/deny" in shown
    assert shown.count('name="comment"') == 1  # one comment, whichever button is pressed
    run_box = re.search(r'<input type="checkbox" name="run"[^>]*>', shown)
    assert run_box is not None and "checked" not in run_box.group(0)  # one click never runs the call


def test_the_requester_sees_its_request_without_the_forms(governed: Governed) -> None:
    approval = ask(governed, "Q-2")
    with person(governed, "alice") as alice:
        shown = card(alice.get("/ui/approvals").text, approval)
        page = alice.get(f"/ui/approvals/{approval}").text
        refused = alice.post(
            f"/ui/approvals/{approval}/approve", data={"csrf_token": csrf_token(page), "run": "1"}
        )
    assert "/approve" not in shown
    assert refused.status_code == 403 and "A-AUTH-APPROVAL-SELF" in refused.text
    assert drops(governed, "Q-2") == 0


def test_a_form_without_the_sessions_token_changes_nothing(governed: Governed) -> None:
    approval = ask(governed, "Q-3")
    with person(governed, "bob") as bob:
        for fields in ({}, {"csrf_token": "guessed", "run": "1"}):
            response = bob.post(f"/ui/approvals/{approval}/approve", data=fields)
            assert response.status_code == 403 and "A-AUTH-CSRF" in response.text
        still = card(bob.get("/ui/approvals").text, approval)
    assert 'data-state="pending"' in still and drops(governed, "Q-3") == 0


def test_approving_with_run_executes_the_call_once(governed: Governed) -> None:
    approval = ask(governed, "Q-4")
    with person(governed, "bob") as bob:
        token = csrf_token(bob.get("/ui/approvals").text)
        done = bob.post(
            f"/ui/approvals/{approval}/approve", data={"csrf_token": token, "run": "1", "comment": "stale"}
        )
        again = bob.post(f"/ui/approvals/{approval}/approve", data={"csrf_token": token, "run": "1"})
        assert done.status_code == 303, done.text  # post, redirect, get: a reload never posts again
        assert done.headers["location"] == f"/ui/approvals/{approval}?done=ran"
        after = bob.get(done.headers["location"])
    assert 'id="call-result"' in after.text and "The call ran: success" in after.text
    envelope = re.search(r'id="call-envelope"><code>(.*?)</code>', after.text, re.DOTALL)
    assert envelope is not None and "&quot;status&quot;: &quot;success&quot;" in envelope.group(1)
    assert "Approved and run." in after.text
    shown = card(after.text, approval)
    assert 'data-state="used"' in shown and "user:bob" in shown and "stale" in shown
    assert again.status_code == 409 and "P-PRECOND-APPROVAL-STATE" in again.text
    assert drops(governed, "Q-4") == 1


def test_denying_runs_nothing(governed: Governed) -> None:
    approval = ask(governed, "Q-5")
    with person(governed, "carol") as carol:
        token = csrf_token(carol.get("/ui/approvals").text)
        done = carol.post(f"/ui/approvals/{approval}/deny", data={"csrf_token": token, "comment": "no"})
        assert done.status_code == 303
        shown = carol.get(done.headers["location"]).text
        denied = carol.get("/ui/approvals", params={"state": "denied"}).text
    assert "Denied." in shown and 'id="call-result"' not in shown
    assert 'data-state="denied"' in card(denied, approval) and drops(governed, "Q-5") == 0


def test_a_persona_without_the_right_or_another_tenant_cannot_decide(governed: Governed) -> None:
    approval = ask(governed, "Q-6")
    with person(governed, "dave", persona="developer") as dave:
        token = csrf_token(dave.get("/ui/catalog").text)
        assert approval not in dave.get("/ui/approvals").text
        refused = dave.post(f"/ui/approvals/{approval}/approve", data={"csrf_token": token, "run": "1"})
    assert refused.status_code == 403 and "A-AUTH-APPROVER" in refused.text
    with person(governed, "eve", tenant="globex") as eve:
        token = csrf_token(eve.get("/ui/catalog").text)
        assert eve.get(f"/ui/approvals/{approval}").status_code == 404
        foreign = eve.post(f"/ui/approvals/{approval}/approve", data={"csrf_token": token, "run": "1"})
    assert foreign.status_code == 404
    assert drops(governed, "Q-6") == 0


def test_an_unknown_state_is_a_clear_error(governed: Governed) -> None:
    with person(governed, "bob") as bob:
        response = bob.get("/ui/approvals", params={"state": "maybe"})
    assert response.status_code == 400 and "state is one of pending, approved" in response.text


def test_the_requester_runs_an_approved_call_from_the_page(governed: Governed) -> None:
    approval = ask(governed, "Q-7")
    with person(governed, "bob") as bob:
        token = csrf_token(bob.get("/ui/approvals").text)
        approved = bob.post(f"/ui/approvals/{approval}/approve", data={"csrf_token": token})
        assert approved.status_code == 303
        shown = bob.get(approved.headers["location"]).text
    assert 'data-state="approved"' in card(shown, approval) and "Approved; run the call" in shown
    assert drops(governed, "Q-7") == 0  # approved, not run
    with person(governed, "alice") as alice:
        page = alice.get("/ui/approvals", params={"state": "approved"}).text
        assert "Run the approved call" in card(page, approval)
        forged = alice.post(f"/ui/approvals/{approval}/run", data={})
        assert forged.status_code == 403 and drops(governed, "Q-7") == 0
        ran = alice.post(f"/ui/approvals/{approval}/run", data={"csrf_token": csrf_token(page)})
        again = alice.post(f"/ui/approvals/{approval}/run", data={"csrf_token": csrf_token(page)})
        assert ran.status_code == 303
        after = alice.get(ran.headers["location"]).text
    assert "The call ran: success" in after and 'id="call-envelope"' in after
    assert 'data-state="used"' in card(after, approval)
    assert again.status_code == 409 and drops(governed, "Q-7") == 1
