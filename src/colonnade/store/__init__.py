"""Persistence: contracts and their versions in SQLite (embedded default) or PostgreSQL.

Names are loaded on first use, so that commands which never touch the database (`--help`,
`contract validate`) do not pay for SQLAlchemy and Alembic.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from colonnade.store.co_occurrence_repo import CoOccurrenceStore
    from colonnade.store.contracts_repo import ContractStore
    from colonnade.store.engine import create_store_engine, session_factory
    from colonnade.store.migrator import migrate, migrate_engine
    from colonnade.store.records import StoredContract, StoredEndpoint, spec_hash
    from colonnade.store.store_errors import (
        ContractConflict,
        ContractNotFound,
        DatabaseUrlError,
        SchemaError,
        StoreError,
    )

_HOMES = {
    "CoOccurrenceStore": "co_occurrence_repo",
    "ContractStore": "contracts_repo",
    "create_store_engine": "engine",
    "session_factory": "engine",
    "ContractConflict": "store_errors",
    "ContractNotFound": "store_errors",
    "DatabaseUrlError": "store_errors",
    "SchemaError": "store_errors",
    "StoreError": "store_errors",
    "migrate": "migrator",
    "migrate_engine": "migrator",
    "StoredContract": "records",
    "StoredEndpoint": "records",
    "spec_hash": "records",
}

__all__ = [
    "CoOccurrenceStore",
    "ContractConflict",
    "ContractNotFound",
    "ContractStore",
    "DatabaseUrlError",
    "SchemaError",
    "StoreError",
    "StoredContract",
    "StoredEndpoint",
    "create_store_engine",
    "migrate",
    "migrate_engine",
    "session_factory",
    "spec_hash",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'colonnade.store' has no attribute {name!r}")
    return getattr(importlib.import_module(f"colonnade.store.{home}"), name)
