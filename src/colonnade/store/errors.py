"""Typed store errors: each message names the contract and says what to do next."""

from __future__ import annotations

__all__ = ["ContractConflict", "ContractNotFound", "DatabaseUrlError", "SchemaError", "StoreError"]


class StoreError(Exception):
    """Base class of every error the store raises on purpose."""


class ContractNotFound(StoreError):
    """No contract (or no published version) matches the request."""


class ContractConflict(StoreError):
    """The request contradicts what is stored, e.g. changing a published version."""


class DatabaseUrlError(StoreError):
    """The database URL is malformed or names a driver Colonnade cannot use."""


class SchemaError(StoreError):
    """The database schema cannot be brought to the version this Colonnade expects."""
