"""The /invoices endpoints of the billing contract: list, read, create, void, refund."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from datetime import date, timedelta
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from examples.demo_backend.db import allocate_id
from examples.demo_backend.errors import ApiError, conflict, not_found
from examples.demo_backend.fields import FieldReader, read_json_object
from examples.demo_backend.state import connection_of

__all__ = ["STATUSES", "routes"]

STATUSES = ("open", "paid", "void", "refunded")
CURRENCIES = ("EUR", "USD", "GBP")
_CUSTOMER_ID = r"C-[0-9]+"
_COLUMNS = "id, customer_id, status, currency, issued_on, due_on, closing_reason"


def _invoice(db: sqlite3.Connection, row: sqlite3.Row) -> dict[str, Any]:
    lines = [
        {
            "description": line["description"],
            "quantity": line["quantity"],
            "unit_price_cents": line["unit_price_cents"],
            "amount_cents": line["quantity"] * line["unit_price_cents"],
        }
        for line in db.execute(
            "SELECT description, quantity, unit_price_cents FROM invoice_lines"
            " WHERE invoice_id = ? ORDER BY position",
            (row["id"],),
        )
    ]
    return {
        "id": row["id"],
        "customer_id": row["customer_id"],
        "status": row["status"],
        "currency": row["currency"],
        "lines": lines,
        "total_cents": sum(line["amount_cents"] for line in lines),
        "issued_on": row["issued_on"],
        "due_on": row["due_on"],
        "closing_reason": row["closing_reason"],
    }


def _load(db: sqlite3.Connection, invoice_id: str) -> dict[str, Any]:
    row = db.execute(f"SELECT {_COLUMNS} FROM invoices WHERE id = ?", (invoice_id,)).fetchone()
    if row is None:
        raise not_found("invoice", invoice_id)
    return _invoice(db, row)


async def list_invoices(request: Request) -> JSONResponse:
    reader = FieldReader(request.query_params, from_query=True)
    customer_id = reader.text("customer_id", max_length=20, pattern=_CUSTOMER_ID)
    status = reader.text("status", max_length=10, choices=STATUSES)
    limit = reader.integer("limit", minimum=1, maximum=100, default=50) or 50
    reader.check()
    filters = {"customer_id": customer_id, "status": status}
    conditions = [f"{column} = ?" for column, value in filters.items() if value is not None]
    values = [value for value in filters.values() if value is not None]
    where = f"WHERE {' AND '.join(conditions)}" if conditions else ""
    db = connection_of(request)
    total = db.execute(f"SELECT COUNT(*) FROM invoices {where}", values).fetchone()[0]
    rows = db.execute(f"SELECT {_COLUMNS} FROM invoices {where} ORDER BY id LIMIT ?", [*values, limit])
    return JSONResponse({"invoices": [_invoice(db, row) for row in rows.fetchall()], "total": total})


async def get_invoice(request: Request) -> JSONResponse:
    return JSONResponse(_load(connection_of(request), request.path_params["invoice_id"]))


async def create_invoice(request: Request) -> JSONResponse:
    body = await read_json_object(request)
    reader = FieldReader(body)
    customer_id = reader.text("customer_id", required=True, max_length=20, pattern=_CUSTOMER_ID)
    currency = reader.text("currency", max_length=3, choices=CURRENCIES) or "EUR"
    due_in_days = reader.integer("due_in_days", minimum=1, maximum=120, default=30) or 30
    lines: list[tuple[str | None, int | None, int | None]] = []
    for line in reader.objects("lines", min_items=1, max_items=50):
        lines.append(
            (
                line.text("description", required=True, max_length=200),
                line.integer("quantity", required=True, minimum=1, maximum=10_000),
                line.integer("unit_price_cents", required=True, minimum=0, maximum=100_000_000),
            )
        )
        line.flag_unknown()
    key = _idempotency_key(request, reader)
    reader.check()
    db = connection_of(request)
    if db.execute("SELECT 1 FROM customers WHERE id = ?", (customer_id,)).fetchone() is None:
        raise ApiError(422, "unknown_customer", f"customer_id {customer_id} does not exist")
    fingerprint = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
    if key is not None:
        replayed = _replay(db, key, fingerprint)
        if replayed is not None:
            return JSONResponse(replayed, status_code=201, headers={"Idempotent-Replayed": "true"})
    issued_on = date.today()
    due_on = issued_on + timedelta(days=due_in_days)
    with db:
        invoice_id = allocate_id(db, "invoice")
        db.execute(
            f"INSERT INTO invoices ({_COLUMNS}) VALUES (?, ?, 'open', ?, ?, ?, NULL)",
            (invoice_id, customer_id, currency, issued_on.isoformat(), due_on.isoformat()),
        )
        db.executemany(
            "INSERT INTO invoice_lines (invoice_id, position, description, quantity, unit_price_cents)"
            " VALUES (?, ?, ?, ?, ?)",
            [(invoice_id, position, *line) for position, line in enumerate(lines)],
        )
        if key is not None:
            db.execute(
                "INSERT INTO idempotency_keys (key, fingerprint, invoice_id) VALUES (?, ?, ?)",
                (key, fingerprint, invoice_id),
            )
    location = {"Location": f"/invoices/{invoice_id}"}
    return JSONResponse(_load(db, invoice_id), status_code=201, headers=location)


def _idempotency_key(request: Request, reader: FieldReader) -> str | None:
    key = request.headers.get("idempotency-key")
    if key is not None and not 8 <= len(key) <= 64:
        reader.problems.append("Idempotency-Key header must be 8 to 64 characters long")
    return key


def _replay(db: sqlite3.Connection, key: str, fingerprint: str) -> dict[str, Any] | None:
    """The invoice an earlier request with this key created; a different request may not reuse it."""
    row = db.execute("SELECT fingerprint, invoice_id FROM idempotency_keys WHERE key = ?", (key,)).fetchone()
    if row is None:
        return None
    if row["fingerprint"] != fingerprint:
        raise conflict(
            "idempotency_key_reused",
            f"Idempotency-Key {key} was used for a different request (invoice {row['invoice_id']});"
            " use a new key for a new invoice",
        )
    return _load(db, row["invoice_id"])


# For each status an invoice may be found in: the refusal code and message when it cannot move.
_VOID_REFUSALS = {
    "void": ("already_void", "invoice {id} is already void"),
    "paid": ("invoice_paid", "invoice {id} is paid; refund it instead of voiding it"),
    "refunded": ("invoice_refunded", "invoice {id} was refunded and can no longer be voided"),
}
_REFUND_REFUSALS = {
    "refunded": ("already_refunded", "invoice {id} is already refunded"),
    "open": ("invoice_not_paid", "invoice {id} is not paid; void it instead of refunding it"),
    "void": ("invoice_void", "invoice {id} is void; there is nothing to refund"),
}


async def _close(
    request: Request, *, source: str, target: str, refusals: dict[str, tuple[str, str]]
) -> JSONResponse:
    """Move an invoice from `source` to the final status `target`, keeping the reason; else 409."""
    invoice_id = request.path_params["invoice_id"]
    reader = FieldReader(await read_json_object(request))
    reason = reader.text("reason", required=True, min_length=3, max_length=200)
    reader.check()
    db = connection_of(request)
    status = _load(db, invoice_id)["status"]
    if status != source:
        code, message = refusals[status]
        raise conflict(code, message.format(id=invoice_id))
    with db:
        db.execute(
            "UPDATE invoices SET status = ?, closing_reason = ? WHERE id = ?", (target, reason, invoice_id)
        )
    return JSONResponse(_load(db, invoice_id))


async def void_invoice(request: Request) -> JSONResponse:
    return await _close(request, source="open", target="void", refusals=_VOID_REFUSALS)


async def refund_invoice(request: Request) -> JSONResponse:
    return await _close(request, source="paid", target="refunded", refusals=_REFUND_REFUSALS)


routes = [
    Route("/invoices", list_invoices, methods=["GET"]),
    Route("/invoices", create_invoice, methods=["POST"]),
    Route("/invoices/{invoice_id:str}", get_invoice, methods=["GET"]),
    Route("/invoices/{invoice_id:str}/void", void_invoice, methods=["POST"]),
    Route("/invoices/{invoice_id:str}/refund", refund_invoice, methods=["POST"]),
]
