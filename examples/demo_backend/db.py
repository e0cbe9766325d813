"""The demo backend's own SQLite database: schema, first-start seeding, one shared connection."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from examples.demo_backend.seed import seed

__all__ = ["DEFAULT_DB_PATH", "DemoDatabase", "allocate_id", "open_database"]

DEFAULT_DB_PATH = Path(".colonnade") / "demo_backend.db"

SCHEMA = """
CREATE TABLE IF NOT EXISTS customers (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    email TEXT NOT NULL UNIQUE,
    company TEXT,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS invoices (
    id TEXT PRIMARY KEY,
    customer_id TEXT NOT NULL REFERENCES customers (id),
    status TEXT NOT NULL CHECK (status IN ('open', 'paid', 'void', 'refunded')),
    currency TEXT NOT NULL,
    issued_on TEXT NOT NULL,
    due_on TEXT NOT NULL,
    closing_reason TEXT
);
CREATE TABLE IF NOT EXISTS invoice_lines (
    invoice_id TEXT NOT NULL REFERENCES invoices (id),
    position INTEGER NOT NULL,
    description TEXT NOT NULL,
    quantity INTEGER NOT NULL,
    unit_price_cents INTEGER NOT NULL,
    PRIMARY KEY (invoice_id, position)
);
CREATE TABLE IF NOT EXISTS id_counters (
    kind TEXT PRIMARY KEY,
    prefix TEXT NOT NULL,
    last INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS idempotency_keys (
    key TEXT PRIMARY KEY,
    fingerprint TEXT NOT NULL,
    invoice_id TEXT NOT NULL REFERENCES invoices (id)
);
"""


def open_database(path: str | Path) -> sqlite3.Connection:
    """Open (creating folders and tables as needed) and seed the synthetic data on first start."""
    db_path = Path(path)
    db_path.parent.mkdir(parents=True, exist_ok=True)
    # The server runs every handler on the event-loop thread, but the loop may not be the thread
    # that opened the connection (e.g. uvicorn started in a test thread).
    connection = sqlite3.connect(db_path, check_same_thread=False)
    connection.row_factory = sqlite3.Row
    connection.execute("PRAGMA foreign_keys = ON")
    with connection:
        connection.executescript(SCHEMA)
        if connection.execute("SELECT COUNT(*) FROM customers").fetchone()[0] == 0:
            seed(connection)
    return connection


def allocate_id(connection: sqlite3.Connection, kind: str) -> str:
    """The next id of a kind (`C-1006`, `INV-2007`); a deleted record's id is never handed out again.

    Call it inside the transaction that inserts the record.
    """
    connection.execute("UPDATE id_counters SET last = last + 1 WHERE kind = ?", (kind,))
    row = connection.execute("SELECT prefix, last FROM id_counters WHERE kind = ?", (kind,)).fetchone()
    return f"{row['prefix']}{row['last']}"


class DemoDatabase:
    """Opens the database on first use, so the app also works when mounted without its lifespan."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._connection: sqlite3.Connection | None = None

    @property
    def connection(self) -> sqlite3.Connection:
        return self.open()

    def open(self) -> sqlite3.Connection:
        if self._connection is None:
            self._connection = open_database(self.path)
        return self._connection

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None
