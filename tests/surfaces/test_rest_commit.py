"""`POST /v1/calls/commit`: phase 2 of a two-phase call over REST, against the fault backend's ledger."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx2
import pytest
import yaml

from tests.support.fault_backend import create_app as fault_backend_app
from tests.support.fault_contract import fault_contract
from tests.support.loopback import serve_in_thread
from tests.surfaces.rest_harness import assert_typed_result, gateway_settings, serve_gateway

RESERVE = {"tool_id": "chaos:faults:reserve", "input": {"item_id": "I-1"}}


@dataclass(frozen=True)
class Setup:
    client: httpx2.Client
    backend: str

    def reservations(self) -> dict[str, str]:
        found: dict[str, str] = httpx2.get(f"{self.backend}/ledger").json()["reservations"]
        return found


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    folder = tmp_path_factory.mktemp("two-phase")
    with serve_in_thread(fault_backend_app()) as backend:
        contract = folder / "faults.yaml"
        contract.write_text(yaml.safe_dump(fault_contract(backend)), encoding="utf-8")
        with serve_gateway(gateway_settings(folder / "data", [contract])) as running:
            yield Setup(running.client, backend)


def commit(setup: Setup, body: dict[str, Any], expected_http: int = 200) -> dict[str, Any]:
    response = setup.client.post("/v1/calls/commit", json=body)
    assert response.status_code == expected_http, response.text
    return assert_typed_result(response)


def test_prepare_then_commit_once(setup: Setup) -> None:
    prepared = assert_typed_result(setup.client.post("/v1/calls", json={**RESERVE, "envelope_version": 2}))
    assert prepared["status"] == "success_prep", prepared
    token = prepared["commit_token"]
    reservation = prepared["output"]["reservation_id"]
    assert token and setup.reservations()[reservation] == "held"

    committed = commit(setup, {"commit_token": token, "call_id": "phase-2"})
    assert (committed["status"], committed["call_id"]) == ("success", "phase-2")
    assert setup.reservations()[reservation] == "confirmed"

    again = commit(setup, {"commit_token": token})
    assert (again["status"], again["error"]["code"]) == ("terminal_error", "P-PRECOND-COMMIT-TOKEN")
    assert again["error"]["details"]["state"] == "committed"


def test_a_prepared_call_is_a_success_with_its_commit_token_in_version_1(setup: Setup) -> None:
    prepared = assert_typed_result(setup.client.post("/v1/calls", json=RESERVE))
    assert (prepared["envelope_version"], prepared["status"]) == (1, "success")
    assert prepared["commit_token"] and any("POST /v1/calls/commit" in w for w in prepared["warnings"])
    reservation = prepared["output"]["reservation_id"]
    assert setup.reservations()[reservation] == "held"
    body = {"commit_token": prepared["commit_token"], "envelope_version": 2}
    committed = commit(setup, body)
    assert (committed["envelope_version"], committed["status"]) == (2, "success")
    assert setup.reservations()[reservation] == "confirmed"


def test_unknown_tokens_are_refused(setup: Setup) -> None:
    result = commit(setup, {"commit_token": "ct_forged"})
    assert result["error"]["code"] == "P-PRECOND-COMMIT-TOKEN"
    assert result["error"]["details"]["state"] == "unknown"


def test_malformed_commit_bodies_list_every_violation(setup: Setup) -> None:
    result = commit(setup, {"call_id": 5, "token": "ct_x"}, expected_http=400)
    assert result["error"]["code"] == "I-REQ-ENVELOPE"
    pointers = {v["pointer"] for v in result["error"]["details"]["violations"]}
    assert pointers == {"/commit_token", "/call_id", "/token"}
    empty = commit(setup, {"commit_token": ""}, expected_http=400)
    assert [v["pointer"] for v in empty["error"]["details"]["violations"]] == ["/commit_token"]
    json_type = {"content-type": "application/json"}
    not_json = setup.client.post("/v1/calls/commit", content=b"ct_x", headers=json_type)
    assert not_json.status_code == 400
    assert assert_typed_result(not_json)["error"]["code"] == "I-REQ-ENVELOPE"
