"""`colonnade approvals` against a temporary SQLite store, in-process with Typer's CliRunner: two
calls asked for approval (by the desk directly, as the gateway's gate does), listed, shown, one approved
(as a named person), one denied; self-approval and deciding twice refused; every decision audited."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from typer.testing import CliRunner

from colonnade.calls.approvals import ApprovalDesk, CallFacts
from colonnade.cli import app
from colonnade.config import Settings
from colonnade.governance.principal import Principal, PrincipalKind
from colonnade.runtime.governance import approval_signer
from colonnade.store import create_store_engine, migrate_engine
from colonnade.store.approvals_repo import ApprovalStore

ALICE = Principal(PrincipalKind.USER, "alice", tenant="acme", persona="admin")


async def _ask(data_dir: Path, *ids: str) -> None:
    settings = Settings(data_dir=data_dir)
    engine = create_store_engine(settings.effective_database_url)
    try:
        await migrate_engine(engine)
        desk = ApprovalDesk(ApprovalStore(engine), approval_signer(settings))
        for number, approval_id in enumerate(ids):
            facts = CallFacts(
                tool="acme:items:drop_item",
                version="1.0.0",
                tenant="acme",
                input={"item_id": f"I-{number}"},
                input_hash=f"{number}" * 64,
                requester=ALICE,
                reasons=("acme:items:drop_item is destructive",),
            )
            await desk.ask(approval_id, facts, datetime.now(UTC) + timedelta(hours=1))
    finally:
        await engine.dispose()


def _run(env: dict[str, str], *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(app, list(args), env=env)
    assert result.exit_code == code, result.output
    return result.output


def test_list_show_approve_and_deny(tmp_path: Path) -> None:
    env = {"COLONNADE_DATA_DIR": str(tmp_path / "data"), "COLUMNS": "250"}
    asyncio.run(_ask(tmp_path / "data", "ap_one", "ap_two"))

    listed = _run(env, "approvals", "list")
    assert "ap_one" in listed and "ap_two" in listed and "user:alice" in listed
    shown = json.loads(_run(env, "approvals", "show", "ap_one"))
    assert shown["arguments"] == {"item_id": "I-0"} and shown["state"] == "pending" and "token" not in shown

    assert "A-AUTH-APPROVAL-SELF" in _run(env, "approvals", "approve", "ap_one", "--as", "alice", code=1)
    # the requester under its principal key is the requester too (four-eyes), on approve and deny
    assert "A-AUTH-APPROVAL-SELF" in _run(env, "approvals", "approve", "ap_one", "--as", "user:alice", code=1)
    assert "A-AUTH-APPROVAL-SELF" in _run(env, "approvals", "deny", "ap_one", "--as", "user:alice", code=1)
    for other in ("user:user:alice", "alice ", "system:cli", "group:alice", "user:"):
        assert "--as:" in _run(env, "approvals", "approve", "ap_one", "--as", other, code=2)
    approved = _run(env, "approvals", "approve", "ap_one", "--as", "bob", "--comment", "checked")
    assert "approved ap_one" in approved and "user:bob" in approved
    for verb in ("approve", "deny"):  # a decision names who decides: no operator default to hide behind
        assert "Missing option '--as'" in _run(env, "approvals", verb, "ap_two", code=2)
    assert "denied ap_two" in _run(env, "approvals", "deny", "ap_two", "--as", "carol", "--comment", "no")
    assert "P-PRECOND-APPROVAL-STATE" in _run(env, "approvals", "approve", "ap_two", "--as", "bob", code=1)
    assert "I-REQ-UNKNOWN-RESOURCE" in _run(env, "approvals", "show", "ap_nope", code=1)
    assert "no approvals in state pending" in _run(env, "approvals", "list")
    assert "ap_two" in _run(env, "approvals", "list", "--state", "denied")
    assert "--state is one of" in _run(env, "approvals", "list", "--state", "later", code=2)

    records = [
        json.loads(line)
        for line in _run(env, "audit", "list", "--json", "--limit", "100").splitlines()
        if line.strip()
    ]
    kinds = [record["kind"] for record in records]
    assert kinds.count("approval.approve") == 1 and kinds.count("approval.deny") == 1
    refused = sorted(record["code"] for record in records if record["kind"] == "approval.refuse")
    assert refused == ["A-AUTH-APPROVAL-SELF"] * 3 + ["P-PRECOND-APPROVAL-STATE"]
    filtered = _run(env, "audit", "list", "--json", "--kind", "approval.deny")
    assert [json.loads(line)["kind"] for line in filtered.splitlines() if line.strip()] == ["approval.deny"]
    typo = " ".join(_run(env, "audit", "list", "--kind", "aproval.approve", code=2).split())
    assert "--kind: 'aproval.approve' is not an audit kind (did you mean 'approval.approve'?)" in typo
    assert "the kinds are call, auth.failure," in typo and "approval.expire" in typo


def test_an_empty_list_after_the_demo_names_the_demos_store(tmp_path: Path) -> None:
    """`make run` keeps its approvals in data_dir/demo: an empty list there says how to read them."""
    demo = tmp_path / "data" / "demo"
    env = {"COLONNADE_DATA_DIR": str(tmp_path / "data"), "COLUMNS": "400"}
    assert "COLONNADE_DATA_DIR" not in _run(env, "approvals", "list")
    demo.mkdir(parents=True)
    (demo / "colonnade.db").write_bytes(b"")
    for command in (["approvals", "list"], ["audit", "list"]):
        assert f"run this with COLONNADE_DATA_DIR={demo}" in _run(env, *command), command
