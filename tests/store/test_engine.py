from __future__ import annotations

from pathlib import Path

import pytest

from colonnade.config import Settings
from colonnade.store import DatabaseUrlError, create_store_engine


async def test_sqlite_file_folder_is_created_and_pragmas_are_on(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "nested" / ".colonnade")
    engine = create_store_engine(settings.effective_database_url)
    try:
        async with engine.connect() as connection:
            foreign_keys = (await connection.exec_driver_sql("PRAGMA foreign_keys")).scalar()
            journal = (await connection.exec_driver_sql("PRAGMA journal_mode")).scalar()
    finally:
        await engine.dispose()
    assert (tmp_path / "nested" / ".colonnade" / "colonnade.db").is_file()
    assert foreign_keys == 1
    assert journal == "wal"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("postgresql://u:hunter2@db/app", "needs an async driver"),
        ("mysql+aiomysql://u@db/app", "needs an async driver"),
        ("not a url", "not a valid URL"),
    ],
)
def test_unusable_urls_get_a_clear_error_without_the_password(url: str, expected: str) -> None:
    with pytest.raises(DatabaseUrlError, match=expected) as caught:
        create_store_engine(url)
    assert "hunter2" not in str(caught.value)
    assert "postgresql+asyncpg" in str(caught.value)


def test_unwritable_sqlite_folder_is_reported(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(DatabaseUrlError, match="cannot create the folder"):
        create_store_engine(f"sqlite+aiosqlite:///{blocker / 'sub' / 'colonnade.db'}")
