"""An independent client: the MCP Inspector CLI (Node) lists and calls tools through the gateway.

The Inspector needs Node >= 22.19 (`tests/support/node_tools.py` installs both from npm, once).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.e2e.conftest import Stack
from tests.support.node_tools import CACHE, install, node_env

pytestmark = pytest.mark.e2e

INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"


@pytest.fixture(scope="module")
def inspector() -> list[str]:
    node_bin = install(INSPECTOR)
    return [str(node_bin / "node"), str(CACHE / "node_modules" / ".bin" / "mcp-inspector")]


def _run(inspector: list[str], url: str, *args: str, exit_code: int = 0) -> dict[str, object]:
    env = node_env(Path(inspector[0]).parent)
    run = subprocess.run(
        [*inspector, "--cli", url, *args], capture_output=True, text=True, timeout=120, env=env
    )
    assert run.returncode == exit_code, run.stdout[-2000:] + run.stderr[-2000:]
    data: dict[str, object] = json.loads(run.stdout)
    return data


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_inspector_lists_and_calls(stack: Stack, inspector: list[str], era: str) -> None:
    era_args = ["--protocol-era", "modern"] if era == "modern" else []
    listed = _run(inspector, stack.mcp_url, *era_args, "--method", "tools/list")
    names = {tool["name"] for tool in listed["tools"]}  # type: ignore[attr-defined]
    assert "acme__crm__get_customer" in names and len(names) == 11
    called = _run(
        inspector,
        stack.mcp_url,
        *era_args,
        "--method",
        "tools/call",
        "--tool-name",
        "acme__crm__get_customer",
        "--tool-arg",
        "customer_id=C-1003",
    )
    assert called.get("isError") in (None, False)
    assert "C-1003" in json.dumps(called["content"])
    refused = _run(
        inspector,
        stack.mcp_url,
        *era_args,
        "--method",
        "tools/call",
        "--tool-name",
        "acme__billing__void_invoice",
        "--tool-arg",
        "invoice_id=INV-2002",
        "reason=Issued in error",
        exit_code=5,  # the Inspector's exit code for a result with isError: true
    )
    assert refused.get("isError") is True
    assert "pending (awaiting_approval)" in json.dumps(refused["content"])  # waits for an approver
