"""A PostgreSQL database of its own for each multi-replica test (replicas open it by URL)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest

from colonnade.store import create_store_engine


@pytest.fixture
async def replica_database(postgres_url: str) -> AsyncIterator[str]:
    """A fresh database `colonnade_replicas_<hex>` on the test PostgreSQL, dropped afterwards."""
    name = f"colonnade_replicas_{uuid.uuid4().hex[:12]}"
    engine = create_store_engine(postgres_url)
    admin = engine.execution_options(isolation_level="AUTOCOMMIT")
    try:
        async with admin.connect() as connection:
            await connection.exec_driver_sql(f'CREATE DATABASE "{name}"')
        yield postgres_url.rsplit("/", 1)[0] + f"/{name}"
        async with admin.connect() as connection:
            await connection.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await engine.dispose()
