"""Every endpoint of the demo backend over real HTTP: status codes, error bodies, contract output schemas.

Tests that change data work on records they create (or on seeded records no other test reads), so
they share one backend process per module.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

import httpx2
import pytest

Conforms = Callable[[str, Any], None]
SEEDED_CUSTOMERS = ["C-1001", "C-1002", "C-1003", "C-1004", "C-1005"]


def line(description: str = "Review", quantity: int = 1, unit_price_cents: int = 100) -> dict[str, Any]:
    return {"description": description, "quantity": quantity, "unit_price_cents": unit_price_cents}


def error_of(response: httpx2.Response, status: int, code: str) -> str:
    """Assert the shared JSON error shape and return its message."""
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error"] == code, body
    assert isinstance(body["message"], str) and body["message"]
    return str(body["message"])


def new_customer(client: httpx2.Client, email: str, **fields: Any) -> dict[str, Any]:
    response = client.post("/customers", json={"name": "Test Person", "email": email, **fields})
    assert response.status_code == 201, response.text
    return dict(response.json())


def new_invoice(client: httpx2.Client, **fields: Any) -> dict[str, Any]:
    body = {"customer_id": "C-1003", "lines": [line()]}
    response = client.post("/invoices", json={**body, **fields})
    assert response.status_code == 201, response.text
    return dict(response.json())


# --- health and framework errors ---------------------------------------------------------------


def test_healthz_answers_ok(client: httpx2.Client) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_unknown_path_is_a_json_404(client: httpx2.Client) -> None:
    assert "/no-such-thing" in error_of(client.get("/no-such-thing"), 404, "not_found")


def test_unsupported_method_is_a_json_405(client: httpx2.Client) -> None:
    error_of(client.put("/invoices"), 405, "method_not_allowed")


# --- customers ---------------------------------------------------------------------------------


def test_search_finds_by_part_of_a_name(client: httpx2.Client, assert_conforms: Conforms) -> None:
    body = client.get("/customers", params={"q": "ADA"}).json()
    assert_conforms("search_customers", body)
    assert body["total"] == 1
    assert [c["name"] for c in body["customers"]] == ["Ada Example"]


def test_search_matches_company_and_email(client: httpx2.Client) -> None:
    by_company = client.get("/customers", params={"q": "placeholder labs"}).json()
    by_email = client.get("/customers", params={"q": "grace.sample@"}).json()
    assert [c["id"] for c in by_company["customers"]] == ["C-1003"]
    assert [c["id"] for c in by_email["customers"]] == ["C-1002"]


def test_search_without_q_lists_in_id_order(client: httpx2.Client, assert_conforms: Conforms) -> None:
    body = client.get("/customers", params={"limit": 50}).json()
    assert_conforms("search_customers", body)
    ids = [c["id"] for c in body["customers"]]
    assert ids == sorted(ids, key=lambda i: int(i[2:]))
    assert set(SEEDED_CUSTOMERS) - {"C-1005"} <= set(ids)


def test_search_limit_caps_the_page_but_not_the_total(client: httpx2.Client) -> None:
    body = client.get("/customers", params={"limit": 2}).json()
    assert len(body["customers"]) == 2
    assert body["total"] >= 4


def test_search_treats_like_wildcards_literally(client: httpx2.Client) -> None:
    assert client.get("/customers", params={"q": "%"}).json() == {"customers": [], "total": 0}
    assert client.get("/customers", params={"q": "_"}).json() == {"customers": [], "total": 0}


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"limit": "0"}, "limit must be between 1 and 50"),
        ({"limit": "many"}, "limit must be an integer"),
        ({"q": "x" * 101}, "q must be 0 to 100 characters long"),
        ({"colour": "red"}, "colour is not a known field"),
    ],
)
def test_search_rejects_bad_parameters(client: httpx2.Client, params: dict[str, str], expected: str) -> None:
    assert expected in error_of(client.get("/customers", params=params), 422, "invalid_request")


def test_get_customer_returns_the_seeded_record(client: httpx2.Client, assert_conforms: Conforms) -> None:
    body = client.get("/customers/C-1001").json()
    assert_conforms("get_customer", body)
    assert body == {
        "id": "C-1001",
        "name": "Ada Example",
        "email": "ada@example.com",
        "company": "Example Analytics Ltd",
        "created_at": "2025-01-06T09:00:00Z",
    }


def test_get_unknown_customer_is_404(client: httpx2.Client) -> None:
    assert "C-9999" in error_of(client.get("/customers/C-9999"), 404, "not_found")


def test_create_customer(client: httpx2.Client, assert_conforms: Conforms) -> None:
    response = client.post("/customers", json={"name": "Nia Created", "email": " Nia.Created@Example.com "})
    assert response.status_code == 201, response.text
    body = response.json()
    assert_conforms("create_customer", body)
    assert body["name"] == "Nia Created"
    assert body["email"] == "nia.created@example.com"
    assert body["company"] is None
    assert response.headers["location"] == f"/customers/{body['id']}"
    assert client.get(f"/customers/{body['id']}").json() == body


def test_create_customer_with_a_used_email_is_409(client: httpx2.Client) -> None:
    response = client.post("/customers", json={"name": "Ada Again", "email": "ada@example.com"})
    assert "C-1001" in error_of(response, 409, "email_taken")


def test_create_customer_reports_every_problem_at_once(client: httpx2.Client) -> None:
    response = client.post("/customers", json={"company": 7, "nickname": "x"})
    assert response.status_code == 422
    assert response.json()["details"] == [
        "name is required",
        "email is required",
        "company must be a string",
        "nickname is not a known field",
    ]


def test_create_customer_with_a_malformed_email_is_422(client: httpx2.Client) -> None:
    response = client.post("/customers", json={"name": "No At", "email": "no-at.example.com"})
    assert "missing_at_sign" in error_of(response, 422, "invalid_request")


@pytest.mark.parametrize("raw", [b"{not json", b"[1, 2]", b'"text"'])
def test_a_body_that_is_not_a_json_object_is_400(client: httpx2.Client, raw: bytes) -> None:
    response = client.post("/customers", content=raw, headers={"content-type": "application/json"})
    error_of(response, 400, "malformed_json")


def test_update_changes_only_the_given_fields(client: httpx2.Client, assert_conforms: Conforms) -> None:
    created = new_customer(client, "upd.one@example.com", company="Old Co")
    response = client.patch(f"/customers/{created['id']}", json={"company": "New Co"})
    assert response.status_code == 200, response.text
    assert_conforms("update_customer", response.json())
    assert response.json() == {**created, "company": "New Co"}


def test_update_customer_null_clears_the_company(client: httpx2.Client) -> None:
    created = new_customer(client, "upd.two@example.com", company="Gone Co")
    body = client.patch(f"/customers/{created['id']}", json={"company": None}).json()
    assert body["company"] is None


def test_update_customer_needs_something_to_change(client: httpx2.Client) -> None:
    assert "nothing to update" in error_of(client.patch("/customers/C-1004", json={}), 422, "invalid_request")


def test_update_customer_refuses_null_name(client: httpx2.Client) -> None:
    response = client.patch("/customers/C-1004", json={"name": None})
    assert "name must not be null" in error_of(response, 422, "invalid_request")


def test_update_customer_refuses_an_email_of_someone_else(client: httpx2.Client) -> None:
    created = new_customer(client, "upd.three@example.com")
    response = client.patch(f"/customers/{created['id']}", json={"email": "grace.sample@example.com"})
    error_of(response, 409, "email_taken")


def test_update_customer_may_keep_its_own_email(client: httpx2.Client) -> None:
    created = new_customer(client, "upd.four@example.com")
    response = client.patch(f"/customers/{created['id']}", json={"email": "UPD.four@example.com"})
    assert response.status_code == 200
    assert response.json()["email"] == "upd.four@example.com"


def test_update_unknown_customer_is_404(client: httpx2.Client) -> None:
    error_of(client.patch("/customers/C-9999", json={"name": "Nobody"}), 404, "not_found")


def test_delete_customer(client: httpx2.Client, assert_conforms: Conforms) -> None:
    created = new_customer(client, "del.one@example.com")
    response = client.delete(f"/customers/{created['id']}")
    assert response.status_code == 200
    assert_conforms("delete_customer", response.json())
    assert response.json() == {"id": created["id"], "deleted": True}
    error_of(client.get(f"/customers/{created['id']}"), 404, "not_found")
    error_of(client.delete(f"/customers/{created['id']}"), 404, "not_found")


def test_a_deleted_customer_id_is_never_reused(client: httpx2.Client) -> None:
    newest = new_customer(client, "del.newest@example.com")
    assert client.delete(f"/customers/{newest['id']}").status_code == 200
    successor = new_customer(client, "del.successor@example.com")
    assert int(successor["id"][2:]) > int(newest["id"][2:])


def test_delete_customer_with_invoices_is_409(client: httpx2.Client) -> None:
    assert "accounting" in error_of(client.delete("/customers/C-1001"), 409, "customer_has_invoices")
    assert client.get("/customers/C-1001").status_code == 200


# --- e-mail check ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("email", "normalized", "reason"),
    [
        ("Ada@example.com", "ada@example.com", None),
        ("  first.last+tag@sub.example.com ", "first.last+tag@sub.example.com", None),
        ("", None, "empty"),
        ("ada.example.com", None, "missing_at_sign"),
        ("a@b@example.com", None, "several_at_signs"),
        (".ada@example.com", None, "bad_local_part"),
        ("ada..x@example.com", None, "bad_local_part"),
        ("ada@localhost", None, "bad_domain"),
        ("ada@-example.com", None, "bad_domain"),
        ("ada@example.c0m", None, "bad_domain"),
        ("a" * 250 + "@example.com", None, "too_long"),
    ],
)
def test_validate_email(
    client: httpx2.Client, assert_conforms: Conforms, email: str, normalized: str | None, reason: str | None
) -> None:
    response = client.get("/utils/validate-email", params={"email": email})
    assert response.status_code == 200, response.text
    body = response.json()
    assert_conforms("validate_email_format", body)
    assert body == {"email": email, "valid": reason is None, "normalized": normalized, "reason": reason}


def test_validate_email_requires_the_email(client: httpx2.Client) -> None:
    assert "email is required" in error_of(client.get("/utils/validate-email"), 422, "invalid_request")


# --- invoices ----------------------------------------------------------------------------------


def test_list_invoices_of_a_customer(client: httpx2.Client, assert_conforms: Conforms) -> None:
    body = client.get("/invoices", params={"customer_id": "C-1001"}).json()
    assert_conforms("list_invoices", body)
    assert [i["id"] for i in body["invoices"]] == ["INV-2001", "INV-2002"]
    assert body["total"] == 2


def test_list_invoices_by_status_and_limit(client: httpx2.Client, assert_conforms: Conforms) -> None:
    void = client.get("/invoices", params={"status": "void"}).json()
    assert_conforms("list_invoices", void)
    assert "INV-2004" in [i["id"] for i in void["invoices"]]
    assert {i["status"] for i in void["invoices"]} == {"void"}
    page = client.get("/invoices", params={"limit": 1}).json()
    assert [i["id"] for i in page["invoices"]] == ["INV-2001"]
    assert page["total"] >= 6


def test_list_invoices_of_an_unknown_customer_is_empty(client: httpx2.Client) -> None:
    assert client.get("/invoices", params={"customer_id": "C-9999"}).json() == {"invoices": [], "total": 0}


def test_list_invoices_rejects_bad_filters(client: httpx2.Client) -> None:
    response = client.get("/invoices", params={"status": "lost", "customer_id": "1001", "limit": "500"})
    assert response.status_code == 422
    assert response.json()["details"] == [
        "customer_id must match C-[0-9]+",
        "status must be one of open, paid, void, refunded",
        "limit must be between 1 and 100",
    ]


def test_get_invoice_computes_amounts_and_total(client: httpx2.Client, assert_conforms: Conforms) -> None:
    body = client.get("/invoices/INV-2001").json()
    assert_conforms("get_invoice", body)
    assert [line["amount_cents"] for line in body["lines"]] == [180000, 4500]
    assert body["total_cents"] == 184500
    assert (body["status"], body["currency"], body["closing_reason"]) == ("open", "EUR", None)


def test_get_unknown_invoice_is_404(client: httpx2.Client) -> None:
    assert "INV-9999" in error_of(client.get("/invoices/INV-9999"), 404, "not_found")


def test_create_invoice(client: httpx2.Client, assert_conforms: Conforms) -> None:
    lines = [line("Consulting", 3, 15000), line("Travel", 1, 2250)]
    response = client.post(
        "/invoices", json={"customer_id": "C-1003", "currency": "USD", "due_in_days": 14, "lines": lines}
    )
    assert response.status_code == 201, response.text
    body = response.json()
    assert_conforms("create_invoice", body)
    assert (body["status"], body["currency"], body["total_cents"]) == ("open", "USD", 47250)
    issued = date.fromisoformat(body["issued_on"])
    assert date.fromisoformat(body["due_on"]) - issued == timedelta(days=14)
    assert response.headers["location"] == f"/invoices/{body['id']}"
    assert client.get(f"/invoices/{body['id']}").json() == body


def test_create_invoice_defaults_to_eur_and_30_days(client: httpx2.Client) -> None:
    body = new_invoice(client)
    assert body["currency"] == "EUR"
    assert date.fromisoformat(body["due_on"]) - date.fromisoformat(body["issued_on"]) == timedelta(days=30)


def test_create_invoice_for_an_unknown_customer_is_422(client: httpx2.Client) -> None:
    response = client.post("/invoices", json={"customer_id": "C-9999", "lines": [line()]})
    assert "C-9999" in error_of(response, 422, "unknown_customer")


def test_create_invoice_reports_every_line_problem(client: httpx2.Client) -> None:
    lines = [line(quantity=0), {"quantity": True, "extra": 1}, 5]
    response = client.post("/invoices", json={"customer_id": "C-1003", "currency": "JPY", "lines": lines})
    assert response.status_code == 422
    assert response.json()["details"] == [
        "currency must be one of EUR, USD, GBP",
        "lines[2] must be an object",
        "lines[0].quantity must be between 1 and 10000",
        "lines[1].description is required",
        "lines[1].quantity must be an integer",
        "lines[1].unit_price_cents is required",
        "lines[1].extra is not a known field",
    ]


def test_create_invoice_needs_at_least_one_line(client: httpx2.Client) -> None:
    response = client.post("/invoices", json={"customer_id": "C-1003", "lines": []})
    assert "lines must have 1 to 50 items" in error_of(response, 422, "invalid_request")


def test_create_invoice_with_a_repeated_idempotency_key_bills_once(client: httpx2.Client) -> None:
    headers = {"Idempotency-Key": "test-key-repeat-0001"}
    body = {"customer_id": "C-1003", "lines": [line("Once", unit_price_cents=700)]}
    first = client.post("/invoices", json=body, headers=headers)
    second = client.post("/invoices", json=body, headers=headers)
    assert first.status_code == second.status_code == 201
    assert second.json() == first.json()
    assert second.headers["idempotent-replayed"] == "true"
    listed = client.get("/invoices", params={"customer_id": "C-1003", "limit": 100}).json()["invoices"]
    assert [i["id"] for i in listed].count(first.json()["id"]) == 1
    assert sum(1 for i in listed if i["lines"][0]["description"] == "Once") == 1


def test_create_invoice_refuses_a_key_reused_for_another_request(client: httpx2.Client) -> None:
    headers = {"Idempotency-Key": "test-key-reuse-0001"}
    first = {"customer_id": "C-1003", "lines": [line("First")]}
    assert client.post("/invoices", json=first, headers=headers).status_code == 201
    other = {"customer_id": "C-1003", "lines": [line("Other")]}
    response = client.post("/invoices", json=other, headers=headers)
    assert "new key" in error_of(response, 409, "idempotency_key_reused")


def test_create_invoice_rejects_a_short_idempotency_key(client: httpx2.Client) -> None:
    body = {"customer_id": "C-1003", "lines": [line()]}
    response = client.post("/invoices", json=body, headers={"Idempotency-Key": "short"})
    assert "Idempotency-Key" in error_of(response, 422, "invalid_request")


def test_void_invoice(client: httpx2.Client, assert_conforms: Conforms) -> None:
    invoice = new_invoice(client)
    response = client.post(f"/invoices/{invoice['id']}/void", json={"reason": "Issued twice"})
    assert response.status_code == 200, response.text
    assert_conforms("void_invoice", response.json())
    assert response.json() == {**invoice, "status": "void", "closing_reason": "Issued twice"}


def test_voiding_a_void_invoice_is_409(client: httpx2.Client) -> None:
    invoice = new_invoice(client)
    client.post(f"/invoices/{invoice['id']}/void", json={"reason": "First time"})
    response = client.post(f"/invoices/{invoice['id']}/void", json={"reason": "Second time"})
    assert "already void" in error_of(response, 409, "already_void")
    assert client.get(f"/invoices/{invoice['id']}").json()["closing_reason"] == "First time"


def test_voiding_a_paid_invoice_is_409(client: httpx2.Client) -> None:
    response = client.post("/invoices/INV-2002/void", json={"reason": "Try anyway"})
    assert "refund" in error_of(response, 409, "invoice_paid")
    assert client.get("/invoices/INV-2002").json()["status"] == "paid"


def test_void_needs_a_reason(client: httpx2.Client) -> None:
    invoice = new_invoice(client)
    response = client.post(f"/invoices/{invoice['id']}/void", json={})
    assert "reason is required" in error_of(response, 422, "invalid_request")
    assert client.get(f"/invoices/{invoice['id']}").json()["status"] == "open"


def test_void_unknown_invoice_is_404(client: httpx2.Client) -> None:
    error_of(client.post("/invoices/INV-9999/void", json={"reason": "Gone"}), 404, "not_found")


def test_refund_invoice(client: httpx2.Client, assert_conforms: Conforms) -> None:
    response = client.post("/invoices/INV-2005/refund", json={"reason": "Goodwill"})
    assert response.status_code == 200, response.text
    assert_conforms("refund_invoice", response.json())
    assert (response.json()["status"], response.json()["closing_reason"]) == ("refunded", "Goodwill")
    again = client.post("/invoices/INV-2005/refund", json={"reason": "Goodwill"})
    error_of(again, 409, "already_refunded")
    error_of(client.post("/invoices/INV-2005/void", json={"reason": "Late"}), 409, "invoice_refunded")


@pytest.mark.parametrize(("invoice_id", "code"), [("INV-2004", "invoice_void"), ("new", "invoice_not_paid")])
def test_refund_needs_a_paid_invoice(client: httpx2.Client, invoice_id: str, code: str) -> None:
    target = new_invoice(client)["id"] if invoice_id == "new" else invoice_id
    error_of(client.post(f"/invoices/{target}/refund", json={"reason": "Why not"}), 409, code)
