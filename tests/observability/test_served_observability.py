"""The real `colonnade serve` process: stdio keeps stdout for the protocol, HTTP serves /metrics."""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from prometheus_client.parser import text_string_to_metric_families

from tests.e2e.conftest import COLONNADE, Stack, stack  # noqa: F401  (the module's real stack)

pytestmark = pytest.mark.e2e


async def test_stdio_writes_only_protocol_to_stdout_and_logs_to_stderr(stack: Stack, tmp_path: Path) -> None:  # noqa: F811
    stdout_copy, stderr_file = tmp_path / "stdout.jsonl", tmp_path / "stderr.log"
    env = {**stack.env, "COLONNADE_DATA_DIR": str(tmp_path / "data"), "COLONNADE_LOG_LEVEL": "info"}
    # `tee` keeps a copy of every byte the gateway writes to stdout; the client still reads them all.
    params = StdioServerParameters(
        command="/bin/sh",
        args=["-c", '"$0" serve --stdio | tee "$1"', str(COLONNADE), str(stdout_copy)],
        env=env,
    )
    with stderr_file.open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            found = await client.call_tool("acme__crm__get_customer", {"customer_id": "C-1002"})
            missing = await client.call_tool("acme__crm__get_customer", {"customer_id": "C-404"})
    assert found.is_error is False and missing.is_error is True

    protocol = stdout_copy.read_text().splitlines()
    assert protocol and all(json.loads(line)["jsonrpc"] == "2.0" for line in protocol)
    logged = [json.loads(line) for line in stderr_file.read_text().splitlines() if line.strip()]
    calls = [line for line in logged if line.get("event") == "call"]
    assert [(c["tool"], c["status"], c["code"]) for c in calls] == [
        ("acme:crm:get_customer", "success", None),
        ("acme:crm:get_customer", "terminal_error", "I-REQ-UPSTREAM-NOT-FOUND"),
    ]
    assert all(c["args"] == ["customer_id"] for c in calls)
    assert "C-1002" not in stderr_file.read_text()


async def test_http_gateway_serves_metrics_that_move_with_calls(stack: Stack) -> None:  # noqa: F811
    async with Client(stack.mcp_url) as client:
        await client.call_tool("acme__crm__get_customer", {"customer_id": "C-1001"})
        await client.call_tool("acme__crm__get_customer", {"customer_id": "C-1001"})
    response = httpx2.get(f"{stack.gateway_url}/metrics", timeout=10)
    assert response.status_code == 200
    samples = [s for family in text_string_to_metric_families(response.text) for s in family.samples]
    by_name = {(s.name, tuple(sorted(s.labels.items()))): s.value for s in samples}
    ok = (("code", ""), ("status", "success"), ("tool", "acme:crm:get_customer"))
    assert by_name[("colonnade_calls_total", ok)] >= 2
    assert by_name[("colonnade_calls_in_flight", (("tool", "acme:crm:get_customer"),))] == 0
    assert by_name[("colonnade_catalog_tools", ())] == 11
