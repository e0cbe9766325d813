"""Alembic environment for Colonnade's store.

`colonnade.store.migrator` hands over an open connection in `config.attributes["connection"]`.
Maintainers run Alembic directly (`alembic -c src/colonnade/store/migrations/alembic.ini revision
--autogenerate -m "..."`); then the database is the one Colonnade's settings select.
"""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy import Connection

from colonnade.config import load_settings
from colonnade.store.engine import create_store_engine
from colonnade.store.tables import metadata


def _configure_and_run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        compare_type=True,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


def _database_url() -> str:
    return context.config.get_main_option("sqlalchemy.url") or load_settings().effective_database_url


def _run_offline() -> None:
    context.configure(
        url=_database_url(),
        target_metadata=metadata,
        literal_binds=True,
        dialect_opts={"paramstyle": "named"},
    )
    with context.begin_transaction():
        context.run_migrations()


async def _run_on_url() -> None:
    engine = create_store_engine(_database_url())
    try:
        async with engine.connect() as connection:
            await connection.run_sync(_configure_and_run)
    finally:
        await engine.dispose()


def _run() -> None:
    if context.is_offline_mode():
        _run_offline()
        return
    connection = context.config.attributes.get("connection")
    if isinstance(connection, Connection):
        _configure_and_run(connection)
    else:
        asyncio.run(_run_on_url())


_run()
