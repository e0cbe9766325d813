"""The vault's storage: one SQLite file per data folder, one row per blob, opened per call.

A connection per call keeps the store safe to use from the worker threads the organ runtime runs
plain functions in; WAL lets readers go on while a writer writes.
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["DEFAULT_FOLDER", "BlobRow", "BlobStore", "store_for"]

DEFAULT_FOLDER = Path(".colonnade") / "organs" / "vault"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS blobs (
    key TEXT PRIMARY KEY,
    content BLOB NOT NULL,
    media_type TEXT NOT NULL,
    is_text INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    stored_at REAL NOT NULL
)
"""


@dataclass(frozen=True, slots=True)
class BlobRow:
    key: str
    content: bytes
    media_type: str
    is_text: bool
    sha256: str
    stored_at: float


class BlobStore:
    def __init__(self, folder: Path) -> None:
        self.path = folder / "vault.db"

    @contextlib.contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=5.0)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(_SCHEMA)
            with conn:
                yield conn
        finally:
            conn.close()

    def put(self, key: str, content: bytes, media_type: str, is_text: bool) -> tuple[BlobRow, bool]:
        """Store (or replace) a blob; also says whether a blob was replaced."""
        row = BlobRow(key, content, media_type, is_text, hashlib.sha256(content).hexdigest(), time.time())
        with self._connection() as conn:
            replaced = conn.execute("SELECT 1 FROM blobs WHERE key = ?", (key,)).fetchone() is not None
            conn.execute(
                "INSERT OR REPLACE INTO blobs (key, content, media_type, is_text, sha256, stored_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (row.key, row.content, row.media_type, int(row.is_text), row.sha256, row.stored_at),
            )
        return row, replaced

    def get(self, key: str) -> BlobRow | None:
        with self._connection() as conn:
            found = conn.execute(
                "SELECT key, content, media_type, is_text, sha256, stored_at FROM blobs WHERE key = ?", (key,)
            ).fetchone()
        return _row(found) if found is not None else None

    def delete(self, key: str) -> bool:
        with self._connection() as conn:
            return conn.execute("DELETE FROM blobs WHERE key = ?", (key,)).rowcount > 0

    def texts(self) -> list[tuple[str, str]]:
        """(key, text) of every text blob, by key."""
        with self._connection() as conn:
            rows = conn.execute("SELECT key, content FROM blobs WHERE is_text = 1 ORDER BY key").fetchall()
        return [(key, bytes(content).decode("utf-8")) for key, content in rows]


def _row(found: tuple[object, ...]) -> BlobRow:
    key, content, media_type, is_text, sha256, stored_at = found
    return BlobRow(str(key), bytes(content), str(media_type), bool(is_text), str(sha256), float(stored_at))  # type: ignore[arg-type]


def store_for(data_dir: str | None) -> BlobStore:
    """The store of the organ's data folder (the gateway gives one), else ./.colonnade/organs/vault."""
    return BlobStore(Path(data_dir) if data_dir else DEFAULT_FOLDER)
