"""Typed store errors: each message names the contract and says what to do next."""

from __future__ import annotations

from colonnade.errors import ColonnadeError

__all__ = ["ContractConflict", "ContractNotFound", "DatabaseUrlError", "SchemaError", "StoreError"]


class StoreError(ColonnadeError):
    """Base class of every error the store raises on purpose."""

    code = "S-TOOL-STORE"


class ContractNotFound(StoreError):
    """No contract (or no published version) matches the request."""

    code = "C-CONTRACT-UNKNOWN"


class ContractConflict(StoreError):
    """The request contradicts what is stored, e.g. changing a published version."""

    code = "C-CONTRACT-IMMUTABLE"


class DatabaseUrlError(StoreError):
    """The database URL is malformed or names a driver Colonnade cannot use."""

    code = "S-TOOL-STORE-URL"


class SchemaError(StoreError):
    """The database schema cannot be brought to the version this Colonnade expects."""

    code = "S-TOOL-STORE-SCHEMA"
