"""`colonnade secrets` and `colonnade keys rotate-signing` against a temporary SQLite store: values go in
by stdin or file and never come out, the key ring can come from the environment (KMS-style), the
ring rotates and re-seals, and every change is in the audit log."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from colonnade.cli import app
from colonnade.store.sealing import Sealer, SealError, sealer_for

VALUE = "cli-value-6f3b9d2e81"


def _run(env: dict[str, str], *args: str, code: int = 0, value: str | None = None) -> str:
    result = CliRunner().invoke(app, list(args), env=env, input=value)
    assert result.exit_code == code, result.output
    return result.output


def test_secrets_commands_never_show_a_value_and_are_audited(tmp_path: Path) -> None:
    env = {"COLONNADE_DATA_DIR": str(tmp_path / "data"), "COLUMNS": "250"}
    assert "version 1" in _run(env, "secrets", "set", "crm-token", "--tenant", "acme", value=VALUE)
    new_value = tmp_path / "new.txt"
    new_value.write_text(VALUE + "-2\n", encoding="utf-8")
    rotated = _run(env, "secrets", "rotate", "crm-token", "--tenant", "acme", "--from-file", str(new_value))
    assert "version 2" in rotated
    listed = _run(env, "secrets", "list")
    assert "crm-token" in listed and "current" in listed and "previous, verifies until" in listed
    assert VALUE not in listed
    ring_before = json.loads((tmp_path / "data" / "seal-keys.json").read_text(encoding="utf-8"))
    assert "re-sealed 2" in _run(env, "secrets", "key-ring", "rotate")
    ring_after = json.loads((tmp_path / "data" / "seal-keys.json").read_text(encoding="utf-8"))
    assert ring_after["current"] != ring_before["current"] and set(ring_before["keys"]) < set(
        ring_after["keys"]
    )
    assert ring_after["current"] in _run(env, "secrets", "list")
    assert "approvals: signs with key" in _run(env, "keys", "rotate-signing", "--which", "approvals")
    assert "--which is approvals" in _run(env, "keys", "rotate-signing", "--which", "nope", code=2)
    assert "deleted crm-token (2 versions)" in _run(env, "secrets", "delete", "crm-token", "--tenant", "acme")
    assert "I-REQ-UNKNOWN-RESOURCE" in _run(env, "secrets", "delete", "crm-token", "--tenant", "acme", code=1)
    records = [
        json.loads(line)
        for line in _run(env, "audit", "list", "--json", "--limit", "100").splitlines()
        if line
    ]
    kinds = [record["kind"] for record in records]
    assert kinds == ["secret.set", "secret.rotate", "secret.reseal", "signing_key.rotate", "secret.delete"]
    assert VALUE not in json.dumps(records)
    assert records[3]["details"]["purpose"] == "approvals"
    assert records[3]["details"]["key_id"] != records[3]["details"]["previous_key_id"]


def test_the_key_ring_from_the_environment_and_its_problems(tmp_path: Path) -> None:
    ring = _run({}, "secrets", "key-ring", "new").strip()
    env = {
        "COLONNADE_DATA_DIR": str(tmp_path / "data"),
        "COLONNADE_VAULT__KEY_RING_ENV": "CLN_SEAL_RING",
        "CLN_SEAL_RING": ring,
        "COLUMNS": "250",
    }
    _run(env, "secrets", "set", "crm-token", value=VALUE)
    assert not (tmp_path / "data" / "seal-keys.json").exists()  # the environment's ring, not the data dir's
    assert "environment variable CLN_SEAL_RING" in _run(env, "secrets", "key-ring", "rotate", code=2)
    unset = {**env, "CLN_SEAL_RING": ""}
    assert "CLN_SEAL_RING, which is not set" in _run(unset, "secrets", "list", code=2)
    assert sealer_for(tmp_path, key_ring_env="CLN_SEAL_RING", environ={"CLN_SEAL_RING": ring}).current == (
        Sealer.from_json(ring).current
    )


def test_a_key_ring_file_that_is_missing_or_not_a_ring_says_how_to_fix_it(tmp_path: Path) -> None:
    missing = tmp_path / "absent.json"
    try:
        sealer_for(tmp_path, key_ring_file=missing)
    except SealError as exc:
        assert "colonnade secrets key-ring new" in str(exc)
    else:
        raise AssertionError("a missing key ring file was accepted")
    broken = tmp_path / "broken.json"
    broken.write_text("{}", encoding="utf-8")
    try:
        sealer_for(tmp_path, key_ring_file=broken)
    except SealError as exc:
        assert "not a sealing key ring" in str(exc)
    else:
        raise AssertionError("a broken key ring file was accepted")
