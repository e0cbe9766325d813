"""Deterministic synthetic records the demo starts with; the demo contracts' examples rely on them.

Every name, address and amount is made up; e-mail addresses use the reserved example.com domain.
"""

from __future__ import annotations

import sqlite3
from typing import NamedTuple

__all__ = ["CUSTOMERS", "INVOICES", "SeedCustomer", "SeedInvoice", "SeedLine", "seed"]


class SeedCustomer(NamedTuple):
    id: str
    name: str
    email: str
    company: str | None
    created_at: str


class SeedLine(NamedTuple):
    description: str
    quantity: int
    unit_price_cents: int


class SeedInvoice(NamedTuple):
    id: str
    customer_id: str
    status: str
    currency: str
    issued_on: str
    due_on: str
    closing_reason: str | None
    lines: tuple[SeedLine, ...]


CUSTOMERS = (
    SeedCustomer("C-1001", "Ada Example", "ada@example.com", "Example Analytics Ltd", "2025-01-06T09:00:00Z"),
    SeedCustomer(
        "C-1002", "Grace Sample", "grace.sample@example.com", "Sample Systems GmbH", "2025-01-13T10:30:00Z"
    ),
    SeedCustomer(
        "C-1003", "Alan Placeholder", "alan.placeholder@example.com", "Placeholder Labs",
        "2025-02-03T14:15:00Z",
    ),
    SeedCustomer("C-1004", "Katherine Demo", "katherine.demo@example.com", None, "2025-02-17T08:45:00Z"),
    SeedCustomer(
        "C-1005", "Edsger Testcase", "edsger.testcase@example.com", "Testcase & Sons", "2025-03-03T16:00:00Z"
    ),
)

INVOICES = (
    SeedInvoice(
        "INV-2001", "C-1001", "open", "EUR", "2025-03-01", "2025-03-31", None,
        (SeedLine("Analytics workshop (2 days)", 2, 90000), SeedLine("Workshop materials", 1, 4500)),
    ),
    SeedInvoice(
        "INV-2002", "C-1001", "paid", "EUR", "2025-01-10", "2025-02-09", None,
        (SeedLine("Dashboard licence, Q1", 1, 45000),),
    ),
    SeedInvoice(
        "INV-2003", "C-1002", "open", "EUR", "2025-03-05", "2025-04-04", None,
        (SeedLine("Integration support hours", 12, 9500),),
    ),
    SeedInvoice(
        "INV-2004", "C-1003", "void", "USD", "2025-02-04", "2025-03-06", "Issued to the wrong customer",
        (SeedLine("Onboarding package", 1, 30000),),
    ),
    SeedInvoice(
        "INV-2005", "C-1002", "paid", "EUR", "2025-02-01", "2025-03-03", None,
        (SeedLine("Onboarding package", 1, 30000),),
    ),
    SeedInvoice(
        "INV-2006", "C-1004", "paid", "GBP", "2025-02-20", "2025-03-22", None,
        (SeedLine("Data export service", 3, 12000),),
    ),
)


def _number(record_id: str) -> int:
    return int(record_id.rsplit("-", 1)[1])


def seed(connection: sqlite3.Connection) -> None:
    """Insert the synthetic records; the caller decides when (only into an empty database)."""
    connection.executemany(
        "INSERT INTO id_counters (kind, prefix, last) VALUES (?, ?, ?)",
        [
            ("customer", "C-", max(_number(c.id) for c in CUSTOMERS)),
            ("invoice", "INV-", max(_number(i.id) for i in INVOICES)),
        ],
    )
    connection.executemany(
        "INSERT INTO customers (id, name, email, company, created_at) VALUES (?, ?, ?, ?, ?)", CUSTOMERS
    )
    for invoice in INVOICES:
        connection.execute(
            "INSERT INTO invoices (id, customer_id, status, currency, issued_on, due_on, closing_reason)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            invoice[:7],
        )
        connection.executemany(
            "INSERT INTO invoice_lines (invoice_id, position, description, quantity, unit_price_cents)"
            " VALUES (?, ?, ?, ?, ?)",
            [(invoice.id, position, *line) for position, line in enumerate(invoice.lines)],
        )
