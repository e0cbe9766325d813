"""Organs in real processes: the sidecar over stdio, and a served gateway over streamable HTTP.

Both are driven by the official `mcp` client, as an MCP host would drive them.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters

from tests.e2e.conftest import COLONNADE, Stack
from tests.support.loopback import free_port, start_process, stop_process, wait_http
from tests.support.repo import ROOT

pytestmark = pytest.mark.e2e


def _sidecar(data_dir: Path) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COLONNADE_")}
    args = ["organ", "serve", "examples.organs.vault", "-I", str(ROOT), "--data-dir", str(data_dir)]
    return StdioServerParameters(command=str(COLONNADE), args=args, env=env, cwd=str(data_dir))


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_sidecar_serves_the_organ_over_stdio(tmp_path: Path, mode: str) -> None:
    async with Client(_sidecar(tmp_path), mode=mode) as client:  # type: ignore[arg-type]
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert list(tools) == ["store", "retrieve", "delete", "similarity.search"]
        delete = tools["delete"]
        assert delete.annotations is not None and delete.annotations.destructive_hint is True
        stored = await client.call_tool("store", {"key": "n.txt", "content": "overdue invoice"})
        read = await client.call_tool("retrieve", {"key": "n.txt"})
        found = await client.call_tool("similarity.search", {"query": "invoice"})
        unknown = await client.call_tool("shred", {"key": "n.txt"})
        invalid = await client.call_tool("store", {"key": ""})
    assert stored.is_error is False and isinstance(stored.structured_content, dict)
    assert stored.structured_content["size"] == 15
    assert (
        isinstance(read.structured_content, dict) and read.structured_content["content"] == "overdue invoice"
    )
    assert (
        isinstance(found.structured_content, dict)
        and found.structured_content["matches"][0]["key"] == "n.txt"
    )
    for failed, code in ((unknown, "UnsupportedOperation"), (invalid, "InvalidInput")):
        assert failed.is_error is True
        text = failed.content[0]
        assert isinstance(text, types.TextContent) and text.text.startswith(f"{code}: ")
    assert (tmp_path / "vault" / "vault.db").is_file()  # the organ's state, in its own folder


def test_the_sidecar_refuses_a_module_without_an_organ(tmp_path: Path) -> None:
    run = subprocess.run(
        [str(COLONNADE), "organ", "serve", "json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert run.returncode == 2 and run.stdout == ""
    assert "module 'json' has no attribute 'organ'" in run.stderr and "Traceback" not in run.stderr


@pytest.fixture(scope="module")
def organ_gateway(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`colonnade serve` with the demo contracts and the vault organ, configured by environment."""
    tmp = tmp_path_factory.mktemp("organ-gateway")
    port = free_port()
    env = {
        **stack.env,
        "COLONNADE_DATA_DIR": str(tmp / "data"),
        "COLONNADE_ORGANS__CARDS": json.dumps([str(ROOT / "examples" / "organs" / "vault" / "cards")]),
        "COLONNADE_ORGANS__TENANT": "acme",
        "COLONNADE_ORGANS__IMPORT_PATHS": json.dumps([str(ROOT)]),
    }
    log = tmp / "gateway.log"
    proc = start_process([str(COLONNADE), "serve", "--port", str(port)], log, cwd=tmp, env=env)
    try:
        wait_http(f"http://127.0.0.1:{port}/readyz", proc, log=log)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop_process(proc)


async def test_a_served_gateway_lists_and_calls_organ_tools_over_http(organ_gateway: str) -> None:
    async with Client(organ_gateway) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        stored = await client.call_tool("acme__vault__store", {"key": "http.txt", "content": "hello"})
        customer = await client.call_tool("acme__crm__get_customer", {"customer_id": "C-1001"})
        deleted = await client.call_tool("acme__vault__delete", {"key": "http.txt"})
    assert "acme__vault__store" in names and "acme__crm__get_customer" in names and len(names) == 15
    assert stored.is_error is False and customer.is_error is False
    meta = dict(deleted.meta or {})["colonnade/result"]
    assert deleted.is_error is True and meta["status"] == "pending"  # waits for an approver
