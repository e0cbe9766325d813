"""The demo's destructive tool end to end: voiding an invoice waits for a second person, then runs.

`colonnade demo` writes two admin tokens of tenant acme: `demo-token` asks, `demo-approver-token`
approves (four-eyes). Over REST the approver approves and runs the call at once; over MCP (the
official SDK client, 2026-07-28) the requesting user confirms, the approver approves and the
client retries with the token. The demo backend shows each invoice void exactly then.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from colonnade.calls.envelope import APPROVAL_TOKEN_META_KEY
from colonnade.surfaces.mcp.render import RESULT_META_KEY
from tests.e2e.conftest import COLONNADE, ROOT
from tests.support.loopback import free_port, start_process, wait_http

pytestmark = pytest.mark.e2e
VOID = "acme:billing:void_invoice"


@dataclass
class Demo:
    url: str
    backend: str
    data_dir: Path
    log: Path

    def token(self, name: str) -> str:
        return (self.data_dir / name).read_text().strip()

    def rest(self, name: str) -> httpx2.Client:
        """A REST client that reads envelope version 2 (a parked call is `pending`)."""
        headers = {"Authorization": f"Bearer {self.token(name)}", "Colonnade-Envelope-Version": "2"}
        return httpx2.Client(base_url=self.url, headers=headers, timeout=30.0)

    def invoice_status(self, invoice: str) -> str:
        return str(httpx2.get(f"{self.backend}/invoices/{invoice}").json()["status"])


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Demo]:
    tmp = tmp_path_factory.mktemp("demo-approvals")
    port, backend_port = free_port(), free_port()
    env = {**os.environ, "COLONNADE_DATA_DIR": str(tmp / "data"), "PYTHONPATH": str(ROOT)}
    for name in ("COLONNADE_DATABASE_URL", "COLONNADE_TOKEN"):
        env.pop(name, None)
    log = tmp / "demo.log"
    command = [str(COLONNADE), "demo", "--port", str(port), "--backend-port", str(backend_port)]
    proc = start_process(command, log, cwd=tmp, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_http(f"{url}/readyz", proc, timeout=60, log=log)
        yield Demo(url, f"http://127.0.0.1:{backend_port}", tmp / "data", log)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)


def test_void_an_invoice_over_rest(demo: Demo) -> None:
    arguments = {"invoice_id": "INV-2001", "reason": "Issued to the wrong customer"}
    with demo.rest("demo-token") as requester:
        asked = requester.post("/v1/calls", json={"tool_id": VOID, "input": arguments}).json()
    assert asked["status"] == "pending", asked
    approval = asked["pending"]["token"]
    assert demo.invoice_status("INV-2001") == "open"
    with demo.rest("demo-token") as requester:
        own = requester.post(f"/v1/approvals/{approval}/approve", json={"run": True})
    assert own.status_code == 403 and own.json()["error"]["code"] == "A-AUTH-APPROVAL-SELF"
    with demo.rest("demo-approver-token") as approver:
        listed = approver.get("/v1/approvals").json()["approvals"]
        assert [entry["arguments"] for entry in listed if entry["id"] == approval] == [arguments]
        answer = approver.post(
            f"/v1/approvals/{approval}/approve", json={"comment": "ok", "run": True}
        ).json()
    assert answer["result"]["status"] == "success", answer
    assert demo.invoice_status("INV-2001") == "void"


def test_the_cli_approves_on_the_demo_database_the_banner_names(demo: Demo) -> None:
    """The operator commands read data_dir's database; the banner says which one the demo uses."""
    (line,) = [line for line in demo.log.read_text().splitlines() if "Operator commands" in line]
    setting = line.split("from elsewhere: ", 1)[1].split()[0]
    name, _, data_dir = setting.partition("=")
    assert name == "COLONNADE_DATA_DIR" and Path(data_dir) == demo.data_dir / "demo"
    line_item = {"description": "Setup", "quantity": 1, "unit_price_cents": 5000}
    new = {"customer_id": "C-1002", "lines": [line_item]}
    with demo.rest("demo-token") as requester:
        created = requester.post("/v1/calls", json={"tool_id": "acme:billing:create_invoice", "input": new})
        invoice = created.json()["output"]["id"]
        arguments = {"invoice_id": invoice, "reason": "Issued in error"}
        approval = requester.post("/v1/calls", json={"tool_id": VOID, "input": arguments}).json()
    approval_id = approval["pending"]["token"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("COLONNADE_")}
    env |= {"COLONNADE_DATA_DIR": data_dir, "COLUMNS": "300"}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(COLONNADE), "approvals", *args], env=env, capture_output=True, text=True, timeout=60
        )

    assert approval_id in cli("list").stdout
    own = cli("approve", approval_id, "--as", "user:demo-admin")
    assert own.returncode == 1 and "A-AUTH-APPROVAL-SELF" in own.stderr, own.stderr
    approved = cli("approve", approval_id, "--as", "bob", "--comment", "ok")
    assert approved.returncode == 0 and "as user:bob" in approved.stdout, approved.stderr
    with demo.rest("demo-token") as requester:
        resumed = requester.post(f"/v1/approvals/{approval_id}/resume").json()
    assert resumed["result"]["status"] == "success", resumed
    assert demo.invoice_status(invoice) == "void"


async def test_void_an_invoice_over_mcp(demo: Demo) -> None:
    arguments: dict[str, Any] = {"invoice_id": "INV-2003", "reason": "Replaced by a corrected invoice"}
    questions: list[str] = []

    async def confirm(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        questions.append(params.message)
        return types.ElicitResult(action="accept", content={"confirm": True})

    headers = {"Authorization": f"Bearer {demo.token('demo-token')}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30.0) as http,
        Client(
            streamable_http_client(f"{demo.url}/mcp", http_client=http), elicitation_callback=confirm
        ) as client,
    ):
        parked = await client.call_tool("acme__billing__void_invoice", arguments)
        envelope = (parked.meta or {})[RESULT_META_KEY]
        assert envelope["status"] == "pending" and len(questions) == 1, envelope
        approval = envelope["pending"]["token"]
        assert demo.invoice_status("INV-2003") == "open"
        with demo.rest("demo-approver-token") as approver:
            assert approver.post(f"/v1/approvals/{approval}/approve", json={}).status_code == 200
        with demo.rest("demo-token") as requester:
            shown = requester.get(f"/v1/approvals/{approval}").json()["approval"]
        assert shown["confirmed_by_user"] is True
        ran = await client.call_tool(
            "acme__billing__void_invoice", arguments, meta={APPROVAL_TOKEN_META_KEY: shown["token"]}
        )
    assert not ran.is_error, ran
    assert demo.invoice_status("INV-2003") == "void"
