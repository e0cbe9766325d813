"""`colonnade contract diff` and the compatibility gate of `contract publish`, on real version files.

The issue's case: 1.2.0 drops one tool and renames another under a minor bump. Publishing it is
refused with the list of what breaks; `--allow-breaking --reason` lets it through and the audit
chain records the reason and the breaking changes; 2.0.0 with the same changes publishes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from colonnade.contracts.compatibility import BREAKING_WITHOUT_MAJOR
from tests.cli.test_contract_store import Workspace, invoke, workspace

__all__ = ["workspace"]

VERSIONS = Path(__file__).parent.parent / "fixtures" / "contracts" / "versions"


def _file(version: str) -> str:
    return str(VERSIONS / f"orders-{version}.yaml")


def _audit_records(workspace: Workspace) -> list[dict[str, Any]]:
    result = invoke(workspace, "audit", "list", "--kind", "contract.publish", "--json")
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


def test_diff_prints_the_classification_as_text_and_json(workspace: Workspace) -> None:
    text = invoke(workspace, "contract", "diff", _file("1.0.0"), _file("1.1.0"))
    assert text.exit_code == 0, text.output
    assert "tool-added" in text.stdout and "track_order" in text.stdout
    assert "needs a minor bump, got minor (enough)" in text.stdout

    breaking = invoke(workspace, "contract", "diff", _file("1.1.0"), _file("1.2.0"), "--format", "json")
    assert breaking.exit_code == 1
    report = json.loads(breaking.stdout)
    assert report["required_bump"] == "major" and report["actual_bump"] == "minor"
    assert {(c["kind"], c["tool"]) for c in report["changes"] if c["class"] == "breaking"} == {
        ("tool-removed", "cancel_order"),
        ("tool-renamed", "list_orders"),
    }
    assert [f["code"] for f in report["findings"]] == [BREAKING_WITHOUT_MAJOR]

    major = invoke(workspace, "contract", "diff", _file("1.1.0"), _file("2.0.0"), "-f", "json")
    assert major.exit_code == 0
    assert json.loads(major.stdout)["bump_suffices"] is True


def test_diff_of_two_different_apis_or_a_broken_file_is_a_usage_error(
    workspace: Workspace, tmp_path: Path
) -> None:
    other = tmp_path / "other.yaml"
    other.write_text(
        Path(_file("1.1.0")).read_text(encoding="utf-8").replace("name: orders", "name: billing")
    )
    mixed = invoke(workspace, "contract", "diff", _file("1.0.0"), str(other))
    assert mixed.exit_code == 2
    assert "same API" in mixed.output
    missing = invoke(workspace, "contract", "diff", _file("1.0.0"), str(tmp_path / "nope.yaml"))
    assert missing.exit_code == 2
    assert "Traceback" not in missing.output


def test_publish_refuses_a_breaking_minor_and_audits_an_override(workspace: Workspace) -> None:
    first = invoke(workspace, "contract", "publish", _file("1.0.0"), _file("1.1.0"))
    assert first.exit_code == 0, first.output

    refused = invoke(workspace, "contract", "publish", _file("1.2.0"), "--format", "json")
    assert refused.exit_code == 1
    assert BREAKING_WITHOUT_MAJOR in refused.stderr
    assert "cancel_order" in refused.stderr and "search_orders" in refused.stderr
    assert "2.0.0" in refused.stderr
    [outcome] = json.loads(refused.stdout)
    assert outcome["published"] is False
    assert outcome["compatibility"]["required_bump"] == "major"
    assert "acme/orders 1.2.0" not in workspace.statuses()

    no_reason = invoke(workspace, "contract", "publish", _file("1.2.0"), "--allow-breaking")
    assert no_reason.exit_code == 2
    assert "--reason" in no_reason.output
    stray = invoke(workspace, "contract", "publish", _file("1.2.0"), "--reason", "because")
    assert stray.exit_code == 2

    allowed = invoke(
        workspace,
        "contract",
        "publish",
        _file("1.2.0"),
        "--allow-breaking",
        "--reason",
        "cancel moved to support",
    )
    assert allowed.exit_code == 0, allowed.output
    assert "CMP003" in allowed.stderr
    assert "acme/orders 1.2.0" in workspace.statuses()

    records = _audit_records(workspace)
    assert [r["details"]["version"] for r in records] == ["1.0.0", "1.1.0", "1.2.0"]
    override = records[-1]
    assert override["decision"] == "breaking-allowed"
    assert override["reasons"] == ["cancel moved to support"]
    assert override["details"]["compatible_with"] == "1.1.0"
    assert sorted(override["details"]["breaking_tools"]) == ["cancel_order", "list_orders"]
    assert records[1]["decision"] is None and records[1]["details"]["breaking"] == []
    verified = invoke(workspace, "audit", "verify")
    assert verified.exit_code == 0, verified.output


def test_a_major_version_publishes_the_same_changes_without_an_override(workspace: Workspace) -> None:
    assert invoke(workspace, "contract", "publish", _file("1.1.0")).exit_code == 0
    major = invoke(workspace, "contract", "publish", _file("2.0.0"))
    assert major.exit_code == 0, major.output
    assert major.stderr == ""
    record = _audit_records(workspace)[-1]
    assert record["decision"] is None
    assert record["details"]["required_bump"] == "major"
    assert {c["tool"] for c in record["details"]["breaking"]} == {"cancel_order", "list_orders"}


def test_republishing_an_accepted_version_is_not_checked_again(workspace: Workspace) -> None:
    assert invoke(workspace, "contract", "publish", _file("1.1.0")).exit_code == 0
    args = ("contract", "publish", _file("1.2.0"), "--allow-breaking", "--reason", "known")
    assert invoke(workspace, *args).exit_code == 0
    again = invoke(workspace, "contract", "publish", _file("1.2.0"))
    assert again.exit_code == 0, again.output
    assert "unchanged (already published)" in again.stdout


def test_deprecate_records_the_sunset_and_successor(workspace: Workspace) -> None:
    assert invoke(workspace, "contract", "publish", _file("1.1.0"), _file("2.0.0")).exit_code == 0
    done = invoke(
        workspace,
        "contract",
        "deprecate",
        "acme",
        "orders",
        "1.1.0",
        "--sunset",
        "2027-03-31",
        "--successor",
        "2.0.0",
    )
    assert done.exit_code == 0, done.output
    assert "move to version 2.0.0" in done.stdout and "2027-03-31T00:00:00+00:00" in done.stdout
    record = _audit_records_of(workspace, "contract.deprecate")[-1]
    assert record["details"]["deprecation"]["successor"] == "2.0.0"
    assert record["details"]["deprecation"]["sunset_at"].startswith("2027-03-31T00:00:00")

    unknown = invoke(workspace, "contract", "deprecate", "acme", "orders", "1.1.0", "--successor", "9.0.0")
    assert unknown.exit_code == 2 and "not a published version" in unknown.output
    backwards = invoke(workspace, "contract", "deprecate", "acme", "orders", "2.0.0", "--successor", "1.1.0")
    assert backwards.exit_code == 1 and "does not follow" in backwards.output
    bad_date = invoke(workspace, "contract", "deprecate", "acme", "orders", "1.1.0", "--sunset", "tomorrow")
    assert bad_date.exit_code == 2 and "--sunset" in bad_date.output


def _audit_records_of(workspace: Workspace, kind: str) -> list[dict[str, Any]]:
    result = invoke(workspace, "audit", "list", "--kind", kind, "--json")
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


def test_publishing_a_draft_or_unreviewed_items_needs_a_confirmation(
    workspace: Workspace, tmp_path: Path
) -> None:
    text = Path(_file("1.0.0")).read_text(encoding="utf-8").replace("status: published", "status: draft")
    draft = tmp_path / "draft.yaml"
    draft.write_text(text + "needs_review:\n  - check the auth of POST /orders\n", encoding="utf-8")

    refused = invoke(workspace, "contract", "publish", str(draft))
    assert refused.exit_code == 1
    assert "status: draft" in refused.stderr and "check the auth of POST /orders" in refused.stderr
    assert "--confirm-draft" in refused.stderr
    assert workspace.statuses() == {}

    confirmed = invoke(workspace, "contract", "publish", "--confirm-draft", str(draft))
    assert confirmed.exit_code == 0, confirmed.output
    record = _audit_records_of(workspace, "contract.publish")[-1]
    assert record["details"]["confirmed_unreviewed"] == [
        "status: draft (imported or unfinished)",
        "needs review: check the auth of POST /orders",
    ]
