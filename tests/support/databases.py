"""Database fixtures for every suite: SQLite (a tmp file) and PostgreSQL (a private schema).

PostgreSQL is expected at 127.0.0.1:5432, database `test` (override with CLN_TEST_POSTGRES_URL).
If it is unreachable the PostgreSQL variants fail, unless CLN_TEST_SKIP_POSTGRES=1 skips them.
Registered as a pytest plugin in the root conftest.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.store import create_store_engine, migrate_engine
from tests.support.suite_env import POSTGRES_URL_VAR, SKIP_POSTGRES_VAR, flag

POSTGRES_URL = os.environ.get(POSTGRES_URL_VAR, "postgresql+asyncpg://postgres@127.0.0.1:5432/test")
SKIP_POSTGRES = flag(SKIP_POSTGRES_VAR)


async def _postgres_problem() -> str | None:
    engine = create_store_engine(POSTGRES_URL, connect_args={"timeout": 5})
    try:
        async with engine.connect() as connection:
            await connection.exec_driver_sql("SELECT 1")
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    finally:
        await engine.dispose()
    return None


@pytest.fixture(scope="session")
def postgres_url() -> str:
    """The PostgreSQL URL once it is known to answer; fails (or skips on request) otherwise."""
    problem = asyncio.run(_postgres_problem())
    if problem is not None:
        message = (
            f"PostgreSQL is not reachable at {POSTGRES_URL} ({problem}). Start it (database `test`, "
            f"trust auth), set {POSTGRES_URL_VAR}, or set {SKIP_POSTGRES_VAR}=1 to skip "
            "the PostgreSQL variants of the store tests."
        )
        if SKIP_POSTGRES:
            pytest.skip(message)
        pytest.fail(message, pytrace=False)
    return POSTGRES_URL


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """URL of the database under test: a fresh SQLite file, or the shared PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'store.db'}"
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture
async def empty_engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    """An engine on an empty database; on PostgreSQL, a private schema dropped afterwards."""
    if database_url.startswith("sqlite"):
        engine = create_store_engine(database_url)
        yield engine
        await engine.dispose()
        return
    schema = f"colonnade_test_{uuid.uuid4().hex[:12]}"
    admin = create_store_engine(database_url)
    async with admin.begin() as connection:
        await connection.exec_driver_sql(f'CREATE SCHEMA "{schema}"')
    engine = create_store_engine(database_url, connect_args=schema_connect_args(schema))
    try:
        yield engine
    finally:
        await engine.dispose()
        async with admin.begin() as connection:
            # A test that failed half-way must not hang the clean-up (or anyone else's run).
            await connection.exec_driver_sql("SET LOCAL lock_timeout = '10s'")
            await connection.exec_driver_sql(f'DROP SCHEMA "{schema}" CASCADE')
        await admin.dispose()


@pytest.fixture
async def sibling_engine(empty_engine: AsyncEngine) -> AsyncIterator[Callable[[], Awaitable[AsyncEngine]]]:
    """Makes more engines on the same database (and schema), as other replicas would have."""
    made: list[AsyncEngine] = []

    async def make() -> AsyncEngine:
        url = empty_engine.url.render_as_string(hide_password=False)
        if empty_engine.dialect.name != "postgresql":
            made.append(create_store_engine(url))
        else:
            async with empty_engine.connect() as connection:
                schema = (await connection.exec_driver_sql("SELECT current_schema()")).scalar_one()
            made.append(create_store_engine(url, connect_args=schema_connect_args(schema)))
        return made[-1]

    yield make
    for engine in made:
        await engine.dispose()


def schema_connect_args(schema: str) -> dict[str, Any]:
    """asyncpg arguments putting a session in `schema`; abandoned transactions end by themselves."""
    return {"server_settings": {"search_path": schema, "idle_in_transaction_session_timeout": "30000"}}


@pytest.fixture
async def engine(empty_engine: AsyncEngine) -> AsyncEngine:
    """An engine on a database migrated to the newest schema."""
    await migrate_engine(empty_engine)
    return empty_engine
