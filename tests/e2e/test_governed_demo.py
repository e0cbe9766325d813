"""The demo as a user runs it: `colonnade demo` needs no set-up, refuses requests without a
credential, and its client commands find the token it wrote. Then every log line and audit record
the run produced is searched for each secret and piece of personal data the test used."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest

from tests.e2e.conftest import COLONNADE, ROOT
from tests.support.loopback import free_port, start_process, wait_http

pytestmark = pytest.mark.e2e


@dataclass
class Demo:
    url: str
    data_dir: Path
    log: Path
    env: dict[str, str]
    proc: subprocess.Popen[bytes]

    def token(self) -> str:
        return (self.data_dir / "demo-token").read_text().strip()

    def colonnade(self, *args: str, data_dir: Path | None = None) -> subprocess.CompletedProcess[str]:
        env = {**self.env, "COLUMNS": "200"}
        if data_dir is not None:
            env["COLONNADE_DATA_DIR"] = str(data_dir)
        return subprocess.run(
            [str(COLONNADE), *args],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
            cwd=self.data_dir.parent,
        )


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Demo]:
    tmp = tmp_path_factory.mktemp("demo")
    port, backend_port = free_port(), free_port()
    env = {**os.environ, "COLONNADE_DATA_DIR": str(tmp / "data"), "PYTHONPATH": str(ROOT)}
    for name in ("COLONNADE_DATABASE_URL", "COLONNADE_TOKEN"):
        env.pop(name, None)
    log = tmp / "demo.log"
    proc = start_process(
        [str(COLONNADE), "demo", "--port", str(port), "--backend-port", str(backend_port)],
        log,
        cwd=tmp,
        env=env,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_http(f"{url}/readyz", proc, timeout=60, log=log)
        yield Demo(url, tmp / "data", log, env, proc)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)


def test_the_demo_refuses_requests_without_a_credential(demo: Demo) -> None:
    for method, path in (("POST", "/mcp"), ("GET", "/v1/tools"), ("GET", "/metrics")):
        response = httpx2.request(method, demo.url + path, json={})
        assert response.status_code == 401, (path, response.text)
        assert "resource_metadata=" in response.headers["www-authenticate"]
    page = httpx2.get(demo.url + "/ui/catalog")
    assert page.status_code == 303 and page.headers["location"].startswith("/ui/login?")
    assert httpx2.get(demo.url + "/readyz").status_code == 200


def test_the_demo_token_is_written_for_the_client_commands(demo: Demo) -> None:
    token_file = demo.data_dir / "demo-token"
    assert token_file.stat().st_mode & 0o077 == 0  # readable by its owner only
    smoke = demo.colonnade("smoke", "--url", f"{demo.url}/mcp", str(ROOT / "examples" / "contracts"))
    assert smoke.returncode == 0, smoke.stdout + smoke.stderr
    listed = demo.colonnade("tools", "list", "--url", demo.url, "--json")
    assert listed.returncode == 0, listed.stderr
    assert len(json.loads(listed.stdout)) == 17  # 11 contract tools, the vault organ and two pathways
    refused = demo.colonnade("tools", "list", "--url", demo.url, "--token", "col_aaaaaaaaaaaa_" + "b" * 43)
    assert refused.returncode != 0 and "A-AUTH-API-KEY" in refused.stderr


def test_no_secret_and_no_personal_data_reaches_a_log_line_or_an_audit_record(demo: Demo) -> None:
    admin = demo.token()
    unique = uuid.uuid4().hex[:10]
    email, name = f"zed.{unique}@example.com", f"Zed Q{unique}"
    forged = admin.rsplit(".", 1)[0] + ".Zm9yZ2VkLXNpZ25hdHVyZS1mb3JnZWQtc2lnbmF0dXJl"
    with httpx2.Client(base_url=demo.url, headers={"Authorization": f"Bearer {admin}"}) as client:
        made = client.post("/v1/keys", json={"owner": "ci-bot", "persona": "consumer", "tenant": "acme"})
        assert made.status_code == 201, made.text
        api_key = made.json()["token"]
        created = client.post(
            "/v1/calls", json={"tool_id": "acme:crm:create_customer", "input": {"name": name, "email": email}}
        ).json()
        assert created["status"] == "success", created
    with httpx2.Client(base_url=demo.url, headers={"Authorization": f"Bearer {api_key}"}) as client:
        search = {"tool_id": "acme:crm:search_customers", "input": {"q": email}}
        refused = client.post("/v1/calls", json=search).json()
        assert refused["error"]["code"] == "A-AUTH-SUBSCRIPTION-REQUIRED"
        assert (
            client.post("/v1/subscriptions", json={"api": "acme:crm"}).json()["subscription"]["state"]
            == "active"
        )
        assert client.post("/v1/calls", json=search).json()["status"] == "success"
    assert (
        httpx2.get(demo.url + "/v1/tools", headers={"Authorization": f"Bearer {forged}"}).status_code == 401
    )

    demo.proc.send_signal(signal.SIGTERM)  # a graceful stop: everything pending is written
    assert demo.proc.wait(timeout=30) == 0
    store = demo.data_dir / "demo"  # the demo keeps its own store (and audit key) there
    verified = demo.colonnade("audit", "verify", data_dir=store)
    assert verified.returncode == 0 and "intact" in verified.stdout, verified.stdout + verified.stderr
    audit = demo.colonnade("audit", "list", "--json", "--limit", "100000", data_dir=store)
    assert audit.returncode == 0, audit.stderr
    records = [json.loads(line) for line in audit.stdout.splitlines() if line.strip()]
    kinds = {record["kind"] for record in records}
    assert {"call", "auth.failure", "key.create", "subscription.request", "contract.publish"} <= kinds
    with sqlite3.connect(store / "colonnade.db") as db:
        stored = "\n".join(str(row) for row in db.execute("SELECT * FROM audit_records"))

    banner = [line for line in demo.log.read_text().splitlines() if '"Authorization": "Bearer' in line]
    logged = "\n".join(line for line in demo.log.read_text().splitlines() if line not in banner)
    assert len(banner) == 1  # the client snippet, printed once for the person who started the demo
    calls = re.findall(r'"event": ?"call"', logged)
    assert len(calls) >= 4  # the calls above were logged (so the search means something)
    secrets = {
        "admin token": admin,
        "API key": api_key,
        "forged token": forged,
        "e-mail": email,
        "name": name,
    }
    for what, secret in secrets.items():
        for where, text in (("log", logged), ("audit list", audit.stdout), ("audit table", stored)):
            assert secret not in text, f"the {what} appears in the {where}"
    assert any(record["code"] == "A-AUTH-SIGNATURE" for record in records)
