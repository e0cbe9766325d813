"""One line for a database the CLI cannot use: which URL (password hidden), the driver's reason, the fix.

Shared by the commands that open the store (`contract ...`) and those that serve, so an unreachable
PostgreSQL reads the same everywhere and never as a traceback.
"""

from __future__ import annotations

from colonnade.config import Settings
from colonnade.store.store_errors import StoreError

__all__ = ["DATABASE_ERRORS", "database_problem"]


def _database_errors() -> tuple[type[BaseException], ...]:
    from sqlalchemy.exc import SQLAlchemyError

    return (SQLAlchemyError, OSError, OverflowError)  # OverflowError: a port past 65535 in the URL


DATABASE_ERRORS = _database_errors()
"""What opening or migrating the store raises when the database is unreachable or refuses us."""


def database_problem(settings: Settings, exc: BaseException) -> str:
    return (
        f"cannot use the database {_shown_url(settings)}: {_reason(exc)}; check database_url "
        "(COLONNADE_DATABASE_URL) and that the database is running"
    )


def _shown_url(settings: Settings) -> str:
    from colonnade.store.engine import parse_database_url

    try:
        return repr(parse_database_url(settings.effective_database_url).render_as_string(hide_password=True))
    except StoreError:
        return "(invalid URL)"


def _reason(exc: BaseException) -> str:
    """The driver's own message, without SQLAlchemy's statement dump and documentation link."""
    from sqlalchemy.exc import DBAPIError, SQLAlchemyError

    if isinstance(exc, DBAPIError) and exc.orig is not None:
        return str(exc.orig)
    if isinstance(exc, SQLAlchemyError):
        return type(exc).__name__
    return str(exc) or type(exc).__name__
