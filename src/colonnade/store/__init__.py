"""Persistence: contracts and their versions in SQLite (embedded default) or PostgreSQL."""

from __future__ import annotations

from colonnade.store.contracts_repo import ContractStore
from colonnade.store.engine import create_store_engine, session_factory
from colonnade.store.errors import (
    ContractConflict,
    ContractNotFound,
    DatabaseUrlError,
    SchemaError,
    StoreError,
)
from colonnade.store.migrate import migrate, migrate_engine
from colonnade.store.records import StoredContract, StoredEndpoint, spec_hash

__all__ = [
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
