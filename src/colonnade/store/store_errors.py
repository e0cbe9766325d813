"""Typed store errors: each message names the contract and says what to do next."""

from __future__ import annotations

import sqlite3

from sqlalchemy.exc import DataError, DBAPIError, IntegrityError, ProgrammingError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from colonnade.errors import ColonnadeError

__all__ = [
    "ContractConflict",
    "ContractNotFound",
    "DatabaseUrlError",
    "SchemaError",
    "StoreError",
    "StoreUnavailable",
    "is_transient",
]


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


class StoreUnavailable(StoreError):
    """The database did not answer (connection lost, locked, pool exhausted): trying again may work.

    Raised in place of the driver's own error so callers can answer "retry" without knowing
    which database, driver or pool sits underneath; the original error is the `__cause__`.
    """

    code = "R-CAP-STORE-UNAVAILABLE"


# Errors that mean the statement itself is wrong, not that the database was briefly away.
_PERMANENT = (IntegrityError, ProgrammingError, DataError)


def is_transient(exc: BaseException) -> bool:
    """Whether `exc` comes from a database that may answer if asked again (vs. a bug in the statement)."""
    if isinstance(exc, StoreUnavailable | PoolTimeout | TimeoutError | ConnectionError):
        return True
    if isinstance(exc, DBAPIError):
        return not isinstance(exc, _PERMANENT)
    return isinstance(exc, sqlite3.OperationalError | OSError)
