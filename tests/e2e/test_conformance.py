"""The MCP conformance suite (npm `@modelcontextprotocol/conformance`) against the running gateway.

Only the scenarios a contract gateway can answer are run: protocol, transport and `tools/list`
behaviour. The others call the suite's own fixture tools, prompts and resources
(`test_simple_text`, `test://static-text`, ...), which only a reference server has. Within a
scenario, every check must pass except the ones listed in `NEEDS_FIXTURES`, each with its reason.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.e2e.conftest import Stack
from tests.support.node_tools import CACHE, install, node_env

pytestmark = pytest.mark.e2e

SUITE = "@modelcontextprotocol/conformance@0.2.0-alpha.12"
LEGACY, MODERN = "2025-11-25", "2026-07-28"
SCENARIOS = [
    (LEGACY, "server-initialize"),
    (LEGACY, "server-session-lifecycle"),
    (LEGACY, "ping"),
    (LEGACY, "tools-list"),
    (LEGACY, "dns-rebinding-protection"),
    (LEGACY, "server-sse-multiple-streams"),
    (MODERN, "server-stateless"),
    (MODERN, "tools-list"),
    (MODERN, "dns-rebinding-protection"),
    (MODERN, "http-header-validation"),
    (MODERN, "server-sse-multiple-streams"),
    (MODERN, "caching"),
]
# Checks that depend on something only the suite's reference server has.
NEEDS_FIXTURES = {
    "sep-2575-server-rejects-undeclared-capability": "calls the fixture tool test_missing_capability",
    "sep-2575-missing-capability-http-400": "calls the fixture tool test_missing_capability",
    "sep-2549-prompts-list-caching-hints": "the gateway serves tools only, no prompts",
    "sep-2549-resources-list-caching-hints": "the gateway serves tools only, no resources",
    "sep-2549-resources-templates-list-caching-hints": "the gateway serves tools only, no resources",
}


@pytest.fixture(scope="module")
def conformance() -> list[str]:
    node_bin = install(SUITE)
    return [str(node_bin / "node"), str(CACHE / "node_modules" / ".bin" / "conformance")]


@pytest.mark.parametrize(("version", "scenario"), SCENARIOS, ids=[f"{v}-{s}" for v, s in SCENARIOS])
def test_conformance_scenario(
    stack: Stack, conformance: list[str], tmp_path: Path, version: str, scenario: str
) -> None:
    run = subprocess.run(
        [*conformance, "server", "--url", stack.mcp_url, "--scenario", scenario,
         "--spec-version", version, "-o", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=180,
        env=node_env(Path(conformance[0]).parent),
    )  # fmt: skip
    results = list(tmp_path.glob("server-*/checks.json"))
    assert len(results) == 1, f"no results from the suite:\n{run.stdout[-3000:]}{run.stderr[-2000:]}"
    checks = json.loads(results[0].read_text())
    assert checks, "the scenario ran no check"
    failed = {c["id"]: c.get("errorMessage") or c["description"] for c in checks if c["status"] == "FAILURE"}
    unexpected = {check: why for check, why in failed.items() if check not in NEEDS_FIXTURES}
    assert not unexpected, json.dumps(unexpected, indent=2)
    passed = [c for c in checks if c["status"] == "SUCCESS"]
    assert passed, f"nothing passed in {scenario}: {checks}"
