"""The real gateway process over Streamable HTTP, driven by the official client in both eras."""

from __future__ import annotations

import json
import subprocess

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client

from tests.e2e.conftest import COLONNADE, Stack

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_list_and_call_over_http(stack: Stack, mode: str) -> None:
    async with Client(stack.mcp_url, mode=mode) as client:  # type: ignore[arg-type]
        assert client.protocol_version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
        listed = await client.list_tools(cache_mode="bypass")
        names = {t.name for t in listed.tools}
        assert {"acme__crm__search_customers", "acme__billing__void_invoice"} <= names
        result = await client.call_tool("acme__crm__search_customers", {"q": "Ada"})
        assert result.is_error is False
        assert "Ada" in json.dumps(result.structured_content)
        void = {"invoice_id": "INV-2001", "reason": "In error"}
        parked = await client.call_tool("acme__billing__void_invoice", void)
        assert parked.is_error is True  # nothing ran: it waits for an approver
        assert "pending (awaiting_approval)" in parked.content[0].text  # type: ignore[union-attr]


def test_health_and_readiness(stack: Stack) -> None:
    assert httpx2.get(f"{stack.gateway_url}/healthz").json()["status"] == "ok"
    ready = httpx2.get(f"{stack.gateway_url}/readyz").json()
    assert ready["status"] == "ready" and ready["tools"] == 11


def test_smoke_passes_against_the_running_gateway(
    stack: Stack, tmp_path_factory: pytest.TempPathFactory
) -> None:
    junit = tmp_path_factory.mktemp("smoke") / "smoke.xml"
    run = subprocess.run(
        [str(COLONNADE), "smoke", "--url", stack.mcp_url, "--junit", str(junit), *map(str, stack.contracts)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**stack.env, "COLUMNS": "200"},
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 failed" in run.stdout
    xml = junit.read_text()
    assert "<testsuite" in xml and "<failure" not in xml and "<skipped" in xml


def test_smoke_fails_when_the_contract_disagrees(
    stack: Stack, tmp_path_factory: pytest.TempPathFactory
) -> None:
    tmp = tmp_path_factory.mktemp("liar")
    text = stack.contracts[0].read_text().replace("side_effects: read", "side_effects: none", 1)
    liar = tmp / "liar.yaml"
    liar.write_text(text)
    run = subprocess.run(
        [str(COLONNADE), "smoke", "--url", stack.mcp_url, str(liar)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**stack.env, "COLUMNS": "200"},
    )
    assert run.returncode == 1, run.stdout + run.stderr
    assert "FAIL" in run.stdout and "annotations" in run.stdout


def test_smoke_reports_an_unreachable_gateway_cleanly(stack: Stack) -> None:
    run = subprocess.run(
        [str(COLONNADE), "smoke", "--url", "http://127.0.0.1:9/mcp", *map(str, stack.contracts)],
        capture_output=True,
        text=True,
        timeout=60,
        env=stack.env,
    )
    assert run.returncode == 2
    assert "cannot run the smoke" in run.stderr and "Traceback" not in run.stderr


def test_smoke_written_to_a_pipe_keeps_every_tool_name_whole(stack: Stack) -> None:
    env = {k: v for k, v in stack.env.items() if k != "COLUMNS"}
    run = subprocess.run(
        [str(COLONNADE), "smoke", "--url", stack.mcp_url, *map(str, stack.contracts)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "…" not in run.stdout
    names = {line.split("│")[1].strip() for line in run.stdout.splitlines() if line.startswith("│ acme:")}
    assert "acme:crm:validate_email_format" in names and "acme:billing:create_invoice" in names
    assert all(name.count(":") == 2 for name in names), names


def test_smoke_as_json(stack: Stack) -> None:
    run = subprocess.run(
        [str(COLONNADE), "smoke", "--url", stack.mcp_url, "--format", "json", str(stack.contracts[0])],
        capture_output=True,
        text=True,
        timeout=120,
        env=stack.env,
    )
    report = json.loads(run.stdout)
    assert run.returncode == 0 and report["ok"] is True and report["failed"] == 0, run.stdout
    assert report["url"] == stack.mcp_url
    assert {"source", "tool", "check", "status", "reason"} == set(report["results"][0])


async def test_publish_in_another_process_is_announced_in_both_eras(stack: Stack) -> None:
    """`colonnade contract publish` writes the store; the running gateway picks it up and tells clients."""
    legacy_heard = anyio.Event()

    async def on_message(message: object) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            legacy_heard.set()

    source = stack.contracts[0]
    bumped = source.with_name("bumped.yaml")
    bumped.write_text(source.read_text().replace("version: 1.0.0", "version: 1.1.0", 1))
    async with (
        Client(stack.mcp_url, mode="legacy", message_handler=on_message) as legacy,
        Client(stack.mcp_url) as modern,
        modern.listen(tools_list_changed=True) as sub,
    ):
        await legacy.list_tools()
        run = await anyio.run_process(
            [str(COLONNADE), "contract", "publish", str(bumped)], env=stack.env, check=False
        )
        assert run.returncode == 0, run.stdout.decode() + run.stderr.decode()
        with anyio.fail_after(15):
            await sub.__anext__()
            await legacy_heard.wait()
        listed = await modern.list_tools(cache_mode="bypass")
    versions = {
        (t.meta or {}).get("colonnade/contract_version")
        for t in listed.tools
        if str((t.meta or {}).get("colonnade/canonical_name", "")).startswith("acme:billing:")
    }
    assert versions == {"1.1.0"}


def test_a_busy_port_is_reported_plainly(tmp_path_factory: pytest.TempPathFactory) -> None:
    import os
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        data = tmp_path_factory.mktemp("busy")
        run = subprocess.run(
            [str(COLONNADE), "serve", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=data,
            env={**os.environ, "COLONNADE_DATA_DIR": str(data)},
        )
    assert run.returncode == 2
    assert f"port {port} on 127.0.0.1 is in use" in run.stderr and "Traceback" not in run.stderr
    assert "serving" not in run.stderr  # checked before the gateway opens, not after it announced itself


@pytest.mark.parametrize("padding", [" ", "\t", "  \t "])
def test_whitespace_around_header_values_is_not_part_of_them(stack: Stack, padding: str) -> None:
    """RFC 9110 5.5: `Mcp-Name: <pad>tool<pad>` names `tool` (the fast parser keeps trailing OWS)."""
    import http.client
    from urllib.parse import urlsplit

    tool, version = "acme__crm__get_customer", "2026-07-28"
    body = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {
            "name": tool,
            "arguments": {"customer_id": "C-1001"},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": version,
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    url = urlsplit(stack.mcp_url)
    conn = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port, timeout=10)
    try:
        conn.request(
            "POST",
            url.path,
            body=json.dumps(body),
            headers={
                "content-type": "application/json",
                "accept": "application/json, text/event-stream",
                "mcp-protocol-version": f"{padding}{version}{padding}",
                "mcp-method": f"{padding}tools/call{padding}",
                "mcp-name": f"{padding}{tool}{padding}",
            },
        )
        response = conn.getresponse()
        answer = json.loads(response.read())
    finally:
        conn.close()
    assert response.status == 200, answer
    assert answer["id"] == 7 and answer["result"]["isError"] is False, answer
