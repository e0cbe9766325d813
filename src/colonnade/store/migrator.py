"""Bring a database to the newest schema with the Alembic migrations shipped in this package.

No `alembic.ini` is needed in the working directory: the configuration is built here and the
migrations run on the caller's connection. On PostgreSQL an advisory lock serialises replicas that
start at the same time.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.util.exc import CommandError
from sqlalchemy import Connection, text
from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.store.engine import create_store_engine
from colonnade.store.store_errors import SchemaError

__all__ = ["MIGRATIONS_DIR", "alembic_config", "migrate", "migrate_engine"]

MIGRATIONS_DIR = Path(__file__).with_name("migrations")
# Arbitrary constant shared by every Colonnade process: "the schema is being migrated".
_MIGRATION_LOCK_KEY = 0x636F6C6F6E6E


def alembic_config() -> Config:
    """Alembic configuration pointing at the packaged migrations."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR).replace("%", "%%"))
    return config


async def migrate(url: str) -> None:
    """Upgrade the database at `url` to the newest schema (creating it if empty); safe to re-run."""
    engine = create_store_engine(url)
    try:
        await migrate_engine(engine)
    finally:
        await engine.dispose()


async def migrate_engine(engine: AsyncEngine) -> None:
    """Upgrade through an existing engine, in one transaction where the database allows it."""
    async with engine.begin() as connection:
        await connection.run_sync(_upgrade_to_head)


def _upgrade_to_head(connection: Connection) -> None:
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK_KEY})
    config = alembic_config()
    config.attributes["connection"] = connection
    try:
        command.upgrade(config, "head")
    except CommandError as exc:
        raise SchemaError(
            f"cannot upgrade the database schema: {exc}; the database may have been migrated by a newer "
            "Colonnade: upgrade Colonnade, or point COLONNADE_DATABASE_URL at another database"
        ) from None
