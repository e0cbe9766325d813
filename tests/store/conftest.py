"""Store fixtures: every store test runs on SQLite (a tmp file) and on PostgreSQL (a private schema).

PostgreSQL is expected at 127.0.0.1:5432, database `test` (override with COLONNADE_TEST_POSTGRES_URL).
If it is unreachable the PostgreSQL variants fail, unless COLONNADE_TEST_SKIP_POSTGRES=1 skips them.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.contracts.model import Contract
from colonnade.store import ContractStore, create_store_engine, migrate_engine

POSTGRES_URL = os.environ.get(
    "COLONNADE_TEST_POSTGRES_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
)
SKIP_POSTGRES = os.environ.get("COLONNADE_TEST_SKIP_POSTGRES") == "1"


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
            "trust auth), set COLONNADE_TEST_POSTGRES_URL, or set COLONNADE_TEST_SKIP_POSTGRES=1 to skip "
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
    engine = create_store_engine(database_url, connect_args={"server_settings": {"search_path": schema}})
    try:
        yield engine
    finally:
        await engine.dispose()
        async with admin.begin() as connection:
            await connection.exec_driver_sql(f'DROP SCHEMA "{schema}" CASCADE')
        await admin.dispose()


@pytest.fixture
async def engine(empty_engine: AsyncEngine) -> AsyncEngine:
    """An engine on a database migrated to the newest schema."""
    await migrate_engine(empty_engine)
    return empty_engine


@pytest.fixture
def store(engine: AsyncEngine) -> ContractStore:
    return ContractStore(engine)


def contract_data(**overrides: Any) -> dict[str, Any]:
    """A small valid CRM contract document; keyword arguments replace top-level fields."""
    data: dict[str, Any] = {
        "name": "crm",
        "version": "1.0.0",
        "tenant": "acme",
        "display_name": "Acme CRM",
        "description": "Customers of Acme.",
        "status": "published",
        "backend": {"base_url": "https://crm.example.com"},
        "endpoints": [
            {
                "path": "/customers/{customer_id}",
                "methods": ["GET"],
                "operation_id": "getCustomer",
                "llm": {
                    "summary": "Get one customer by id.",
                    "intent": "Use when the user names a customer id.",
                    "tool_name": "get_customer",
                    "side_effects": "read",
                    "safe_for_agents": True,
                    "requires_human_approval": False,
                    "examples": [{"input": {"customer_id": "c-1"}, "expected_output_contains": "c-1"}],
                },
            },
            {"path": "/customers", "methods": ["GET", "POST"], "operation_id": "customers"},
        ],
    }
    data.update(overrides)
    return data


@pytest.fixture
def make_contract() -> Callable[..., Contract]:
    def make(**overrides: Any) -> Contract:
        return Contract.model_validate(contract_data(**overrides))

    return make
