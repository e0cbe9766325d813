"""`colonnade contract lock` and `contract check --lock`: a client's tools pinned, and drift found.

A lock taken at 1.1.0 holds while 1.1.0 is served; publishing 2.0.0 (which renames list_orders
and drops cancel_order) is drift for the tools 2.0.0 no longer serves; deprecating 1.1.0 is drift
too. An unreadable lockfile or an unknown tool is a clear usage error.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_contract_store import Workspace, invoke, workspace

__all__ = ["workspace"]

VERSIONS = Path(__file__).parent.parent / "fixtures" / "contracts" / "versions"
TOOLS = ("get_order", "list_orders", "create_order", "cancel_order", "track_order")


def _publish(workspace: Workspace, *versions: str) -> None:
    files = [str(VERSIONS / f"orders-{v}.yaml") for v in versions]
    result = invoke(workspace, "contract", "publish", *files)
    assert result.exit_code == 0, result.output


def test_a_lock_holds_until_the_served_tools_drift(workspace: Workspace) -> None:
    _publish(workspace, "1.1.0")
    lock = workspace.root / "colonnade.lock"
    made = invoke(workspace, "contract", "lock", "acme:orders", "-o", str(lock))
    assert made.exit_code == 0, made.output
    locked = json.loads(lock.read_text(encoding="utf-8"))["tools"]
    assert set(locked) == {f"acme:orders:{t}" for t in TOOLS}
    assert {entry["version"] for entry in locked.values()} == {"1.1.0"}

    clean = invoke(workspace, "contract", "check", "--lock", str(lock))
    assert clean.exit_code == 0, clean.output
    assert "5 tool(s), no drift" in clean.stdout

    _publish(workspace, "2.0.0")
    drifted = invoke(workspace, "contract", "check", "--lock", str(lock), "--json")
    assert drifted.exit_code == 1
    report = json.loads(drifted.stdout)
    kinds = {(d["tool"].rsplit(":", 1)[1], d["kind"]) for d in report["drift"]}
    assert ("list_orders", "gone") in kinds and ("cancel_order", "gone") in kinds
    assert ("get_order", "moved") in kinds  # 2.0.0 serves it under another version (and digest)

    deprecated = invoke(workspace, "contract", "deprecate", "acme", "orders", "1.1.0")
    assert deprecated.exit_code == 0, deprecated.output
    after = json.loads(invoke(workspace, "contract", "check", "--lock", str(lock), "--json").stdout)
    assert any(d["kind"] == "deprecated" for d in after["drift"])


def test_bad_lockfiles_and_unknown_tools_are_usage_errors(workspace: Workspace) -> None:
    _publish(workspace, "1.1.0")
    missing = invoke(workspace, "contract", "check", "--lock", str(workspace.root / "nope.lock"))
    assert missing.exit_code == 2 and "contract lock" in missing.output
    garbage = workspace.root / "garbage.lock"
    garbage.write_text("{not json", encoding="utf-8")
    broken = invoke(workspace, "contract", "check", "--lock", str(garbage))
    assert broken.exit_code == 2 and "not a colonnade lockfile" in broken.output
    unknown = invoke(workspace, "contract", "lock", "acme:nothing", "-o", str(workspace.root / "x.lock"))
    assert unknown.exit_code == 2 and "names no tool" in unknown.output
