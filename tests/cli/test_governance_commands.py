"""The governance commands against a temporary SQLite store, in-process with Typer's CliRunner:
a key made, listed, rotated and revoked; an agent registered; a subscription requested and
approved; then `audit list` shows every change and `audit verify` finds the chain whole, and a
changed record breaks it (exit 1)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from colonnade.cli import app
from colonnade.governance.identity.dev_issuer import DEV_ALGORITHM, DEV_ISSUER, DevIssuer
from colonnade.governance.identity.issuer_keys import IssuerKeys
from colonnade.governance.identity.tokens import TokenVerifier, TrustedIssuer, VerifiedToken
from tests.support.tenant_contracts import tenant_contract


@pytest.fixture
def workspace(tmp_path: Path) -> dict[str, str]:
    contract = tenant_contract("acme", "items", "http://127.0.0.1:9")
    path = tmp_path / "items.yaml"
    path.write_text(yaml.safe_dump(contract.model_dump(mode="json", exclude_none=True)))
    env = {"COLONNADE_DATA_DIR": str(tmp_path / "data"), "COLUMNS": "250"}
    published = CliRunner().invoke(app, ["contract", "publish", str(path)], env=env)
    assert published.exit_code == 0, published.output
    return env


def _run(env: dict[str, str], *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(app, list(args), env=env)
    assert result.exit_code == code, result.output
    return result.output


def test_keys_agents_subscriptions_and_the_audit_chain(workspace: dict[str, str], tmp_path: Path) -> None:
    created = _run(
        workspace, "keys", "create", "--owner", "ci-bot", "--persona", "consumer", "--tenant", "acme"
    )
    token = next(line for line in created.splitlines() if line.startswith("col_"))
    key_id = token.split("_")[1]
    listed = _run(workspace, "keys", "list")
    assert key_id in listed and token not in listed and "ci-bot" in listed
    rotated = _run(workspace, "keys", "rotate", key_id)
    assert f"rotated {key_id} to" in rotated and "col_" in rotated
    assert "revoked" in _run(workspace, "keys", "revoke", key_id)
    refused = _run(workspace, "keys", "create", "--owner", "x", "--persona", "agent", code=1)
    assert "I-REQ-GOVERNANCE" in refused

    assert "registered agent invoice-bot" in _run(
        workspace, "agents", "register", "--id", "invoice-bot", "--tenant", "acme", "--allow", "acme:items:*"
    )
    assert "I-REQ-GOVERNANCE" in _run(
        workspace, "agents", "register", "--tenant", "acme", "--allow", "globex:items:*", code=1
    )
    assert "invoice-bot" in _run(workspace, "agents", "list")

    requested = _run(workspace, "subscriptions", "request", "--subscriber", "user:bob", "--api", "acme:items")
    subscription = requested.split(":")[0]
    assert "is active" in requested
    assert "is revoked" in _run(workspace, "subscriptions", "revoke", subscription)

    records = [
        json.loads(line)
        for line in _run(workspace, "audit", "list", "--json", "--limit", "1000").splitlines()
        if line
    ]
    kinds = [record["kind"] for record in records]
    for kind in ("key.create", "key.rotate", "key.revoke", "agent.register", "subscription.request",
                 "subscription.revoke"):  # fmt: skip
        assert kind in kinds
    assert "contract.publish" in kinds  # the contract published by the fixture, through the CLI too
    assert {record["actor"] for record in records} == {"system:cli"}
    assert token not in json.dumps(records)
    assert "intact" in _run(workspace, "audit", "verify")

    database = Path(workspace["COLONNADE_DATA_DIR"]) / "colonnade.db"
    with sqlite3.connect(database) as db:
        db.execute("UPDATE audit_records SET tenant = 'globex' WHERE seq = 2")
    broken = _run(workspace, "audit", "verify", code=1)
    assert "broken at record 2" in broken


async def test_token_mint_makes_a_token_the_dev_issuer_verifies(
    workspace: dict[str, str], tmp_path: Path
) -> None:
    out = tmp_path / "token"
    _run(
        workspace,
        "token",
        "mint",
        "--sub",
        "alice",
        "--persona",
        "developer",
        "--tenant",
        "acme",
        "-o",
        str(out),
    )
    assert out.stat().st_mode & 0o077 == 0
    dev = DevIssuer.load_or_create(Path(workspace["COLONNADE_DATA_DIR"]))
    audience = "http://127.0.0.1:8765/mcp"
    trusted = TrustedIssuer(
        DEV_ISSUER, IssuerKeys(keys=dev.public_jwks()), frozenset({DEV_ALGORITHM}), audience
    )
    verified = await TokenVerifier([trusted]).verify(out.read_text().strip())
    assert isinstance(verified, VerifiedToken), verified
    assert verified.claims["persona"] == "developer" and "colonnade:catalog:write" in verified.claims["scope"]
    assert "unknown persona" in _run(workspace, "token", "mint", "--sub", "x", "--persona", "root", code=2)


def test_a_developer_key_without_a_team_is_warned_about_at_creation(workspace: dict[str, str]) -> None:
    args = ["keys", "create", "--owner", "dev", "--persona", "developer", "--tenant", "acme"]
    bare = CliRunner().invoke(app, args, env=workspace)
    assert bare.exit_code == 0, bare.output
    assert "warning: a developer sees only the APIs its team owns" in bare.stderr
    assert "--team TEAM" in bare.stderr
    teamed = CliRunner().invoke(app, [*args, "--team", "team-a"], env=workspace)
    assert teamed.exit_code == 0 and "warning" not in teamed.stderr, teamed.stderr
