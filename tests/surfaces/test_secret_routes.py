"""REST for stored secrets on the real gateway: set, rotate, list and delete; no answer carries a
value (nor a rejected body's); refusals carry their registry codes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from colonnade.config import AuthSettings
from colonnade.governance.key_admin import KeyRequest
from colonnade.governance.principal import Principal
from tests.surfaces.rest_harness import RunningGateway, gateway_settings, serve_gateway

VALUE = "rest-secret-value-8d1e4b"
ROTATED = "rest-secret-rotated-2f7c0a"


@pytest.fixture
def running(tmp_path: Path) -> Iterator[RunningGateway]:
    auth = AuthSettings(enabled=True, resource="http://127.0.0.1/mcp")
    with serve_gateway(gateway_settings(tmp_path / "data", [], auth=auth)) as gateway:
        yield gateway


def _key(running: RunningGateway, persona: str, tenant: str | None = None) -> dict[str, str]:
    key_admin = running.gateway.governance.key_admin
    assert key_admin is not None
    request = KeyRequest(owner=f"{persona}-1", persona=persona, tenant=tenant)
    issued = running.run(key_admin.create(Principal.system("test"), request))
    return {"authorization": f"Bearer {issued.token}"}


def test_secrets_over_rest_never_answer_a_value(running: RunningGateway) -> None:
    with httpx2.Client(
        base_url=str(running.client.base_url), headers=_key(running, "admin"), timeout=30
    ) as client:
        _set_rotate_list_delete(running, client)


def _set_rotate_list_delete(running: RunningGateway, client: httpx2.Client) -> None:
    answers = []
    created = client.put("/v1/secrets/crm-token", json={"value": VALUE, "tenant": "acme"})
    assert created.status_code == 201, created.text
    assert created.json()["secret"]["version"] == 1 and created.json()["secret"]["tenant"] == "acme"
    answers.append(created.text)
    rotated = client.post(
        "/v1/secrets/crm-token/rotate", json={"value": ROTATED, "tenant": "acme", "overlap_s": 60}
    )
    assert rotated.status_code == 201, rotated.text
    answers.append(rotated.text)
    listed = client.get("/v1/secrets", params={"tenant": "acme"})
    assert listed.status_code == 200
    assert [(s["version"], s["current"]) for s in listed.json()["secrets"]] == [(2, True), (1, False)]
    answers.append(listed.text)
    stored = running.run(running.gateway.governance.secrets.resolve("store:crm-token", tenant="acme"))
    assert stored == ROTATED
    bad = client.put("/v1/secrets/crm-token", json={"value": VALUE, "tenant": "acme", "extra": True})
    assert bad.status_code == 400
    answers.append(bad.text)
    unknown = client.post("/v1/secrets/never-set/rotate", json={"value": VALUE})
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "I-REQ-UNKNOWN-RESOURCE"
    answers.append(unknown.text)
    deleted = client.delete("/v1/secrets/crm-token", params={"tenant": "acme"})
    assert deleted.status_code == 200 and deleted.json()["versions"] == 2
    assert client.get("/v1/secrets").json()["secrets"] == []
    everything = json.dumps(answers)
    assert VALUE not in everything and ROTATED not in everything


def test_a_consumer_may_not_read_or_change_secrets(running: RunningGateway) -> None:
    consumer = _key(running, "consumer", tenant="acme")
    listed = running.client.get("/v1/secrets", headers=consumer)
    assert listed.status_code == 403
    changed = running.client.put("/v1/secrets/crm-token", json={"value": VALUE}, headers=consumer)
    assert changed.status_code == 403
