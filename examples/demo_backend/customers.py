"""The /customers endpoints of the CRM contract: search, read, create, update, delete."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from examples.demo_backend.db import allocate_id
from examples.demo_backend.emails import check_email
from examples.demo_backend.errors import ApiError, conflict, not_found
from examples.demo_backend.fields import FieldReader, read_json_object
from examples.demo_backend.state import connection_of

__all__ = ["routes"]

_COLUMNS = "id, name, email, company, created_at"


def _customer(row: sqlite3.Row) -> dict[str, Any]:
    return {key: row[key] for key in ("id", "name", "email", "company", "created_at")}


def _load(db: sqlite3.Connection, customer_id: str) -> dict[str, Any]:
    row = db.execute(f"SELECT {_COLUMNS} FROM customers WHERE id = ?", (customer_id,)).fetchone()
    if row is None:
        raise not_found("customer", customer_id)
    return _customer(row)


def _checked_email(email: str) -> str:
    verdict = check_email(email)
    if verdict.normalized is None:
        raise ApiError(422, "invalid_request", f"email is not a valid address ({verdict.reason})")
    return verdict.normalized


def _ensure_email_free(db: sqlite3.Connection, email: str, owner: str | None = None) -> None:
    row = db.execute("SELECT id FROM customers WHERE email = ?", (email,)).fetchone()
    if row is not None and row["id"] != owner:
        raise conflict("email_taken", f"{email} already belongs to customer {row['id']}")


def _like(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


async def search_customers(request: Request) -> JSONResponse:
    reader = FieldReader(request.query_params, from_query=True)
    q = reader.text("q", min_length=0, max_length=100) or ""
    limit = reader.integer("limit", minimum=1, maximum=50, default=20) or 20
    reader.check()
    db = connection_of(request)
    # SQLite's LIKE ignores ASCII case, which is what a name search wants.
    where = "WHERE name LIKE ?1 ESCAPE '\\' OR email LIKE ?1 ESCAPE '\\' OR company LIKE ?1 ESCAPE '\\'"
    pattern = _like(q)
    total = db.execute(f"SELECT COUNT(*) FROM customers {where}", (pattern,)).fetchone()[0]
    rows = db.execute(
        f"SELECT {_COLUMNS} FROM customers {where} ORDER BY id LIMIT ?2", (pattern, limit)
    ).fetchall()
    return JSONResponse({"customers": [_customer(row) for row in rows], "total": total})


async def get_customer(request: Request) -> JSONResponse:
    return JSONResponse(_load(connection_of(request), request.path_params["customer_id"]))


async def create_customer(request: Request) -> JSONResponse:
    reader = FieldReader(await read_json_object(request))
    name = reader.text("name", required=True, max_length=120)
    email = reader.text("email", required=True, min_length=3, max_length=254)
    company = reader.text("company", max_length=120)
    reader.check()
    assert name is not None and email is not None
    normalized = _checked_email(email)
    db = connection_of(request)
    _ensure_email_free(db, normalized)
    created_at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    with db:
        customer_id = allocate_id(db, "customer")
        db.execute(
            f"INSERT INTO customers ({_COLUMNS}) VALUES (?, ?, ?, ?, ?)",
            (customer_id, name, normalized, company, created_at),
        )
    location = {"Location": f"/customers/{customer_id}"}
    return JSONResponse(_load(db, customer_id), status_code=201, headers=location)


async def update_customer(request: Request) -> JSONResponse:
    customer_id = request.path_params["customer_id"]
    reader = FieldReader(await read_json_object(request))
    changes: dict[str, Any] = {}
    if reader.present("name"):
        changes["name"] = reader.text("name", required=True, max_length=120)
    if reader.present("email"):
        changes["email"] = reader.text("email", required=True, min_length=3, max_length=254)
    if reader.present("company"):
        changes["company"] = reader.text("company", max_length=120, nullable=True)
    if not changes and not reader.problems:
        reader.problems.append("nothing to update: pass at least one of name, email, company")
    reader.check()
    db = connection_of(request)
    _load(db, customer_id)
    if "email" in changes:
        changes["email"] = _checked_email(changes["email"])
        _ensure_email_free(db, changes["email"], owner=customer_id)
    assignments = ", ".join(f"{column} = ?" for column in changes)
    with db:
        db.execute(f"UPDATE customers SET {assignments} WHERE id = ?", (*changes.values(), customer_id))
    return JSONResponse(_load(db, customer_id))


async def delete_customer(request: Request) -> JSONResponse:
    customer_id = request.path_params["customer_id"]
    db = connection_of(request)
    _load(db, customer_id)
    invoices = db.execute("SELECT COUNT(*) FROM invoices WHERE customer_id = ?", (customer_id,)).fetchone()[0]
    if invoices:
        raise conflict(
            "customer_has_invoices",
            f"customer {customer_id} has {invoices} invoice(s), which are kept for accounting;"
            " only customers without invoices can be deleted",
        )
    with db:
        db.execute("DELETE FROM customers WHERE id = ?", (customer_id,))
    return JSONResponse({"id": customer_id, "deleted": True})


routes = [
    Route("/customers", search_customers, methods=["GET"]),
    Route("/customers", create_customer, methods=["POST"]),
    Route("/customers/{customer_id:str}", get_customer, methods=["GET"]),
    Route("/customers/{customer_id:str}", update_customer, methods=["PATCH"]),
    Route("/customers/{customer_id:str}", delete_customer, methods=["DELETE"]),
]
