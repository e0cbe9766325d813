from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Column, Connection, Integer, MetaData, Table, inspect
from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.store import SchemaError, create_store_engine, migrate, migrate_engine
from colonnade.store.migrator import alembic_config
from colonnade.store.tables import metadata

HEAD = ScriptDirectory.from_config(alembic_config()).get_current_head()


def _diff(connection: Connection, target: MetaData) -> list[Any]:
    context = MigrationContext.configure(connection, opts={"compare_type": True})
    return list(compare_metadata(context, target))


def _table_names(connection: Connection) -> set[str]:
    return set(inspect(connection).get_table_names())


async def test_migrate_creates_exactly_the_declared_schema(empty_engine: AsyncEngine) -> None:
    await migrate_engine(empty_engine)
    async with empty_engine.connect() as connection:
        tables = await connection.run_sync(_table_names)
        diff = await connection.run_sync(_diff, metadata)
    assert tables == {"alembic_version", *metadata.tables}
    assert {"contracts", "endpoints"} <= tables
    assert diff == []


async def test_schema_comparison_notices_a_missing_table(empty_engine: AsyncEngine) -> None:
    """Guards the test above: the comparison must be able to fail."""
    await migrate_engine(empty_engine)
    extended = MetaData()
    for table in metadata.tables.values():
        table.to_metadata(extended)
    Table("not_migrated", extended, Column("id", Integer, primary_key=True))
    async with empty_engine.connect() as connection:
        diff = await connection.run_sync(_diff, extended)
    assert [entry[0] for entry in diff] == ["add_table"]


async def test_migrate_twice_changes_nothing(empty_engine: AsyncEngine) -> None:
    await migrate_engine(empty_engine)
    async with empty_engine.begin() as connection:
        await connection.exec_driver_sql(
            "INSERT INTO contracts (tenant, name, version, status, spec_hash, document, created_at, "
            "updated_at) VALUES ('acme', 'crm', '1.0.0', 'draft', 'x', '{}', "
            "'2026-01-01 00:00:00', '2026-01-01 00:00:00')"
        )
    await migrate_engine(empty_engine)
    async with empty_engine.connect() as connection:
        count = (await connection.exec_driver_sql("SELECT count(*) FROM contracts")).scalar()
        revision = (await connection.exec_driver_sql("SELECT version_num FROM alembic_version")).scalar()
    assert count == 1
    assert revision == HEAD


async def test_migrate_by_url_creates_the_sqlite_file_and_its_folder(tmp_path: Path) -> None:
    database = tmp_path / "data" / "colonnade.db"
    await migrate(f"sqlite+aiosqlite:///{database}")
    await migrate(f"sqlite+aiosqlite:///{database}")
    engine = create_store_engine(f"sqlite+aiosqlite:///{database}")
    try:
        async with engine.connect() as connection:
            assert {"contracts", "endpoints"} <= await connection.run_sync(_table_names)
    finally:
        await engine.dispose()


async def test_database_from_a_newer_colonnade_is_refused_clearly(empty_engine: AsyncEngine) -> None:
    await migrate_engine(empty_engine)
    async with empty_engine.begin() as connection:
        await connection.exec_driver_sql("UPDATE alembic_version SET version_num = '9999'")
    with pytest.raises(SchemaError, match="upgrade Colonnade"):
        await migrate_engine(empty_engine)


async def test_replicas_starting_together_migrate_once(
    empty_engine: AsyncEngine, sibling_engine: Callable[[], Awaitable[AsyncEngine]]
) -> None:
    """Several gateways may start at once against one PostgreSQL; on SQLite one process owns the file."""
    if empty_engine.dialect.name != "postgresql":
        pytest.skip("concurrent start-up applies to PostgreSQL")
    others = [await sibling_engine() for _ in range(3)]
    migrations = [migrate_engine(empty_engine), *(migrate_engine(e) for e in others)]
    await asyncio.wait_for(asyncio.gather(*migrations), timeout=30)
    assert await _scalar(empty_engine, "SELECT version_num FROM alembic_version") == HEAD


async def _scalar(engine: AsyncEngine, sql: str) -> Any:
    async with engine.connect() as connection:
        return (await connection.exec_driver_sql(sql)).scalar()


def test_migrations_form_one_line_of_history() -> None:
    """Two helpers adding revisions at once would create two heads; `migrate` needs exactly one."""
    script = ScriptDirectory.from_config(alembic_config())
    assert len(script.get_heads()) == 1
    assert [rev.revision for rev in script.walk_revisions()][-1] == "0001"


def _upgrade(connection: Connection, revision: str) -> None:
    from alembic import command

    config = alembic_config()
    config.attributes["connection"] = connection
    command.upgrade(config, revision)


async def test_commit_tokens_become_parked_calls(empty_engine: AsyncEngine) -> None:
    """A database from before parked calls keeps its prepared two-phase calls, in their new states."""
    async with empty_engine.begin() as connection:
        await connection.run_sync(_upgrade, "0003")
        for token, state in (("ct_live", "prepared"), ("ct_done", "committed"), ("ct_gone", "rolled_back")):
            await connection.exec_driver_sql(
                "INSERT INTO commit_tokens (token, tool, version, input, prepared, state, deadline, "
                "attempts, "
                f"created_at, updated_at) VALUES ('{token}', 'chaos:faults:reserve', '1.0.0', "
                "'{\"item_id\": \"I-1\"}', '{\"reservation_id\": \"R-1\"}', "
                f"'{state}', '2030-01-01 00:00:00', 1, '2026-01-01 00:00:00', '2026-01-01 00:00:00')"
            )
    await migrate_engine(empty_engine)
    async with empty_engine.connect() as connection:
        tables = await connection.run_sync(_table_names)
        rows = (
            await connection.exec_driver_sql(
                "SELECT token, reason, state, principal, attempts FROM parked_calls ORDER BY token"
            )
        ).all()
    assert "commit_tokens" not in tables
    assert [tuple(row) for row in rows] == [
        ("ct_done", "prepared", "resumed", "system:two-phase", 1),
        ("ct_gone", "prepared", "expired", "system:two-phase", 1),
        ("ct_live", "prepared", "parked", "system:two-phase", 1),
    ]
