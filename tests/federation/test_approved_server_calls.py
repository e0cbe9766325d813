"""A downstream server's tool gated by the operator, approved, and run: the whole road a user takes.

`servers:` marks `mcp-server-time`'s read-only `convert_time` with `requires_human_approval`, so a
call of it is parked; an approver approves it with the CLI, and the requester runs it with
`POST /v1/approvals/{id}/resume`. The resume (and any REST call that pins the tool's version)
names the server's tools at the version the gateway reports for them, which must resolve.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client

from colonnade.surfaces.mcp.render import RESULT_META_KEY
from tests.federation.conftest import Federation, approve_by_cli, run_gateway
from tests.support.mcp_servers import venv_stdio

pytestmark = pytest.mark.e2e

ARGS = {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Federation, Path]]:
    tmp = tmp_path_factory.mktemp("approved-server-calls")
    server = venv_stdio("time", "mcp-server-time", tools={"convert_time": {"requires_human_approval": True}})
    with run_gateway(tmp / "gateway", [server]) as federation:
        yield federation, tmp / "gateway"


def _call(federation: Federation, body: dict[str, Any]) -> dict[str, Any]:
    response = httpx2.post(f"{federation.base}/v1/calls", json=body, timeout=30)
    return dict(response.json())


async def test_an_approved_call_of_a_gated_server_tool_resumes_and_runs(
    gated: tuple[Federation, Path],
) -> None:
    federation, folder = gated
    async with Client(federation.mcp) as client:
        parked = await client.call_tool("default__time__convert_time", ARGS)
    shown = dict((parked.meta or {})[RESULT_META_KEY])
    assert shown["status"] == "pending", shown
    approval_id = shown["pending"]["token"]
    approve_by_cli(folder, approval_id)

    response = httpx2.post(f"{federation.base}/v1/approvals/{approval_id}/resume", timeout=30)
    ran = response.json()["result"]
    assert ran["status"] == "success", ran
    assert ran["output"]["target"]["timezone"] == "Asia/Tokyo"
    assert ran["provenance"]["tool_id"] == "default:time:convert_time"


def test_a_rest_call_may_pin_a_server_tools_version(gated: tuple[Federation, Path]) -> None:
    federation, _ = gated
    plain = {"tool_id": "default:time:get_current_time", "input": {"timezone": "UTC"}}
    version = _call(federation, plain)["provenance"]["tool_version"]
    pinned = {**plain, "tool_version": version}
    assert _call(federation, pinned)["status"] == "success"
    by_wire = {**pinned, "tool_id": "default__time__get_current_time"}
    assert _call(federation, by_wire)["status"] == "success"
    other = _call(federation, {**pinned, "tool_version": "1.0.0"})
    assert other["error"]["code"] == "C-CONTRACT-VERSION-MISMATCH", other
    assert version in other["error"]["message"]
