"""`examples/ci/contract-gate.sh` on a real git repository: the gate an API team's CI runs.

The base branch holds orders 1.1.0; a change to 1.2.0 (a tool dropped, one renamed, under a minor
bump) fails the gate with the breaking changes named; 2.0.0 with the same changes passes the diff
but not the LLM-ready rule for its renamed (so new) endpoint, until that endpoint meets it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).parents[2]
GATE = ROOT / "examples" / "ci" / "contract-gate.sh"
VERSIONS = ROOT / "tests" / "fixtures" / "contracts" / "versions"

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com"}
    env.update(GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com")
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "api"
    (repo / "contracts").mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    shutil.copy(VERSIONS / "orders-1.1.0.yaml", repo / "contracts" / "orders.yaml")
    _git(repo, "add", "contracts")
    _git(repo, "commit", "-q", "-m", "orders 1.1.0")
    return repo


def _gate(repo: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COLONNADE_")}
    env.update(BASE="main", CONTRACTS="contracts", COLONNADE=str(Path(sys.executable).with_name("colonnade")))
    env["COLUMNS"] = "200"
    return subprocess.run([str(GATE)], cwd=repo, env=env, capture_output=True, text=True, timeout=120)


def test_the_gate_refuses_a_breaking_minor_and_passes_a_major(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    shutil.copy(VERSIONS / "orders-1.2.0.yaml", repo / "contracts" / "orders.yaml")
    refused = _gate(repo)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "CMP001" in refused.stdout and "cancel_order" in refused.stdout

    shutil.copy(VERSIONS / "orders-2.0.0.yaml", repo / "contracts" / "orders.yaml")
    renamed = _gate(repo)
    assert "needs a major bump, got major (enough)" in renamed.stdout, renamed.stdout + renamed.stderr
    assert "CMP001" not in renamed.stdout
    # The renamed tool is a new MCP endpoint: V2 wants it LLM-ready; the others are grandfathered.
    assert renamed.returncode == 1 and "LLM001" in renamed.stdout and "search_orders" in renamed.stdout
    assert "LLM002" in renamed.stdout

    data = yaml.safe_load((VERSIONS / "orders-2.0.0.yaml").read_text(encoding="utf-8"))
    search = next(e for e in data["endpoints"] if e["llm"]["tool_name"] == "search_orders")
    for name, spec in search["input_schema"]["properties"].items():
        spec["description"] = f"Only orders with this {name}."
    search["output_schema"] = {"type": "object", "properties": {"orders": {"type": "array"}}}
    (repo / "contracts" / "orders.yaml").write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    passed = _gate(repo)
    assert passed.returncode == 0, passed.stdout + passed.stderr
