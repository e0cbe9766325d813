"""A downstream server's `tools/call` answer that is not a valid result ends the same way on every path.

The fault server answers its malformed tools (`fault_server.MALFORMED`) past the SDK's own check of
a handler's result; the gateway reaches it over HTTP (the direct path at 2026-07-28, and the SDK's
path for a handshake-era session or a caller that listens for progress) and over stdio (the SDK's
path, in both eras). On
`/mcp`, on `/servers/{name}/mcp`, for clients of both protocol eras and over REST, the caller gets
a typed result with one code per fault, and the audit log records a failure.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from colonnade.surfaces.mcp.render import RESULT_META_KEY
from tests.federation.conftest import COLONNADE, Federation, run_gateway
from tests.support.fault_server import MALFORMED
from tests.support.loopback import stop_process
from tests.support.mcp_servers import fault_http, fault_stdio

pytestmark = pytest.mark.e2e

CODES = {tool: "D-DATA-MALFORMED" for tool in MALFORMED} | {"off_schema": "D-DATA-OUTPUT-SCHEMA"}
"""The code each malformed answer ends with (structured content that breaks the listed output
schema is the output-schema code every tool's output gets; anything else is malformed)."""
HTTP_ONLY = {"garbage": "D-DATA-MALFORMED"}
"""A body that is not JSON at all: the HTTP fault server's (a stdio line cannot be tied to a call)."""
SERVERS = ("broken", "faulty", "faulty-legacy")


@pytest.fixture(scope="module")
def federation(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Federation]:
    tmp = tmp_path_factory.mktemp("malformed")
    process, url = fault_http(tmp / "fault-http.log")
    servers = [
        {"name": "broken", "transport": "http", "url": url},
        fault_stdio("faulty"),
        fault_stdio("faulty-legacy", protocol="legacy"),
    ]
    try:
        with run_gateway(tmp / "gateway", servers) as gateway:
            yield gateway
    finally:
        stop_process(process)


def tools_of(server: str, *, handshake_era: bool = False) -> dict[str, str | None]:
    """Each tool's code, on a path to `server`. A `resultType` is a 2026-07-28 field: a session of the
    handshake era drops it (as the SDK does), so there `unknown_result_type` is a valid answer (None)."""
    expected: dict[str, str | None] = {**(CODES | HTTP_ONLY if server == "broken" else CODES)}
    if handshake_era or server == "faulty-legacy":
        expected["unknown_result_type"] = None
    return expected


def twin_era(server: str, mode: str) -> bool:
    """Whether a client in `mode` of `/servers/{server}/mcp` that listens for progress reaches the
    server on a handshake-era session (an HTTP server's twin; `/mcp` calls every server on its own
    session, and so does the endpoint for a quiet call, which only the answer can pass)."""
    return server == "broken" and mode == "legacy"


def typed_code(result: types.CallToolResult) -> str | None:
    """The typed result's code; None for the server's answer passed on."""
    error = dict((result.meta or {}).get(RESULT_META_KEY) or {}).get("error")
    if result.is_error is False and error is None and result.content[0].text == "malformed":  # type: ignore[union-attr]
        return None  # the answer as the server sent it
    if result.is_error is not True or error is None:
        return f"not a typed error: {result.model_dump(exclude_none=True)}"
    assert error["code"] in result.content[0].text  # type: ignore[union-attr]
    return str(error["code"])


async def codes_over_mcp(
    url: str, names: dict[str, str], *, mode: str, progress: bool = False
) -> dict[str, str | None]:
    """What a client of this era gets for each tool (`names`: tool -> name on this endpoint)."""

    async def heard(progress: float, total: float | None, message: str | None) -> None:
        return None

    found: dict[str, str | None] = {}
    async with Client(url, mode=mode) as client:  # type: ignore[arg-type]
        for tool, name in names.items():
            try:
                result = await client.call_tool(name, {}, progress_callback=heard if progress else None)
            except MCPError as exc:  # not a typed result: shown in the comparison
                found[tool] = f"JSON-RPC error {exc.error.code}: {exc.error.message}"
                continue
            found[tool] = typed_code(result)
    return found


def aggregate_names(server: str) -> dict[str, str]:
    return {tool: f"default__{server}__{tool}" for tool in tools_of(server)}


@pytest.mark.parametrize("mode", ["auto", "legacy"])
@pytest.mark.parametrize("server", SERVERS)
async def test_the_aggregate_endpoint_answers_a_typed_result(
    federation: Federation, server: str, mode: str
) -> None:
    expected = tools_of(server)
    assert await codes_over_mcp(federation.mcp, aggregate_names(server), mode=mode) == expected
    progress = await codes_over_mcp(federation.mcp, aggregate_names(server), mode=mode, progress=True)
    assert progress == expected  # a caller that listens for progress: the SDK's path over HTTP too


@pytest.mark.parametrize("mode", ["auto", "legacy"])
@pytest.mark.parametrize("server", SERVERS)
async def test_the_server_endpoint_answers_a_typed_result(
    federation: Federation, server: str, mode: str
) -> None:
    expected = tools_of(server)
    names = {tool: tool for tool in expected}
    assert await codes_over_mcp(federation.server(server), names, mode=mode) == expected
    progress = await codes_over_mcp(federation.server(server), names, mode=mode, progress=True)
    assert progress == tools_of(server, handshake_era=twin_era(server, mode))


@pytest.mark.parametrize("server", SERVERS)
def test_rest_answers_the_same_code(federation: Federation, server: str) -> None:
    for tool, code in tools_of(server).items():
        body = {"tool_id": f"default:{server}:{tool}", "input": {}}
        answer = httpx2.post(f"{federation.base}/v1/calls", json=body, timeout=30).json()
        if code is None:
            assert answer["status"] == "success", (tool, answer)
            continue
        assert answer["status"] == "terminal_error" and answer["error"]["code"] == code, (tool, answer)


def test_every_such_call_is_audited_as_a_failure(federation: Federation) -> None:
    """Runs after the calls above (module order): each malformed answer left failure records only."""
    records = audit_records(federation)
    for server in SERVERS:
        for tool, code in tools_of(server).items():
            mine = [r for r in records if r.get("tool") == f"default:{server}:{tool}"]
            assert mine, (server, tool)
            if code is None or (server, tool) == ("broken", "unknown_result_type"):
                continue  # valid on a handshake-era session only: each outcome as its era says
            assert {(r["outcome"], r["code"]) for r in mine} == {("terminal_error", code)}, mine


async def test_a_valid_answer_still_passes(federation: Federation) -> None:
    for url, name in ((federation.mcp, "default__broken__echo"), (federation.server("broken"), "echo")):
        for mode in ("auto", "legacy"):
            async with Client(url, mode=mode) as client:  # type: ignore[arg-type]
                result = await client.call_tool(name, {})
            assert result.is_error is False and result.content[0].text == "echo done"  # type: ignore[union-attr]


def audit_records(federation: Federation) -> list[dict[str, Any]]:
    listed = subprocess.run(
        [str(COLONNADE), "audit", "list", "--kind", "call", "--json", "--limit", "100000"],
        cwd=federation.log.parent,
        env={k: v for k, v in os.environ.items() if not k.startswith("COLONNADE_")},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return [json.loads(line) for line in listed.stdout.splitlines() if line.strip()]
