"""Every command that opens the database says in one line which URL failed and why, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from colonnade.cli import app
from tests.support.loopback import free_port

COMMANDS = [
    ["keys", "list"],
    ["agents", "list"],
    ["approvals", "list"],
    ["subscriptions", "list"],
    ["audit", "list"],
    ["audit", "verify"],
    ["contract", "list"],
    ["usage", "export", "--out", "usage.jsonl"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
@pytest.mark.parametrize(("port", "reason"), [(None, "Connect call failed"), (99999, "port must be 0-65535")])
def test_an_unusable_database_is_one_clear_line(
    tmp_path: Path, command: list[str], port: int | None, reason: str
) -> None:
    url = f"postgresql+asyncpg://colonnade:s3cret@127.0.0.1:{port or free_port()}/nowhere"
    env = {"COLONNADE_DATABASE_URL": url, "COLONNADE_DATA_DIR": str(tmp_path), "COLUMNS": "300"}
    result = CliRunner().invoke(app, command, env=env)
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    assert "cannot use the database 'postgresql+asyncpg://colonnade:***@127.0.0.1:" in lines[0]
    assert reason in lines[0] and "check database_url (COLONNADE_DATABASE_URL)" in lines[0]
    assert "s3cret" not in result.output
