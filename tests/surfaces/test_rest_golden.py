"""Golden request -> result pairs for every outcome class REST can produce today, against real backends.

Each case posts one request to the real gateway (demo backend and fault-injecting backend on
loopback) and compares the normalised CallResult (call_id, metrics, digests, tokens, ports and
timestamps replaced) with `golden/<case>.json` (envelope version 2, asked for with the
`Colonnade-Envelope-Version` header) and `golden/v1/<case>.json` (version 1, what a REST caller gets
without asking). After an intended change, regenerate with
`CLN_TEST_UPDATE_GOLDEN=1 pytest tests/surfaces/test_rest_golden.py` and review the diff.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import pytest
import yaml

from colonnade.adapters.secrets import EnvSecretResolver
from colonnade.calls.envelope import ENVELOPE_VERSION_HEADER
from colonnade.calls.errors_doc import ERROR_CLASSES, class_of
from colonnade.surfaces.envelope_parsing import DEFAULT_MAX_BODY_BYTES
from tests.support.fault_backend import create_app as fault_backend_app
from tests.support.fault_contract import fault_contract
from tests.support.loopback import serve_in_thread
from tests.support.suite_env import UPDATE_GOLDEN_VAR, flag
from tests.surfaces.rest_harness import (
    assert_typed_result,
    demo_contract_file,
    gateway_settings,
    serve_gateway,
)

GOLDEN = Path(__file__).resolve().parent / "golden"
UPDATE = flag(UPDATE_GOLDEN_VAR)
OFFLINE_URL = "http://127.0.0.1:9"
MISSING_SECRET = "golden-missing-token"
DRIFTED_OUTPUT = {"type": "object", "required": ["tier"]}  # the backend's customers have no tier
_DIGEST = re.compile(r"\b(?!0{64})[0-9a-f]{64}\b")  # tool digests depend on the backends' ports
_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?([+-]\d\d:\d\d|Z)?")
_VOID = {"invoice_id": "INV-2001", "reason": "Issued in error"}
_ONCE = {"max_attempts": 1}  # retryable cases answer at once instead of backing off


@dataclass(frozen=True)
class Case:
    name: str
    body: dict[str, Any] | bytes
    http_status: int
    status: str
    code: str | None
    path: str = "/v1/calls"
    headers: dict[str, str] = field(default_factory=dict)
    before: tuple[dict[str, Any], ...] = ()
    masked: tuple[str, ...] = ()  # JSON pointers whose values differ from run to run
    masked_v1: tuple[str, ...] | None = None  # the same in envelope version 1, when they differ

    def expected(self, version: int) -> tuple[str, str | None]:
        """The status and code of this case in envelope `version` (version 1: four outcomes)."""
        if version == 2:
            return self.status, self.code
        if self.status == "pending":
            return "terminal_error", "P-PRECOND-APPROVAL-PENDING"
        return ("success" if self.status == "success_prep" else self.status), self.code

    def varying(self, version: int) -> tuple[str, ...]:
        return self.masked if version == 2 or self.masked_v1 is None else self.masked_v1


def _get_customer(customer_id: str, api: str = "crm", **envelope: Any) -> dict[str, Any]:
    return {"tool_id": f"acme:{api}:get_customer", "input": {"customer_id": customer_id}, **envelope}


def _fault(fault: str, tool: str = "get_item", **envelope: Any) -> dict[str, Any]:
    arguments = {"item_id": "I-1", "fault": fault} if tool == "get_item" else {"item_id": "I-1"}
    return {"tool_id": f"chaos:faults:{tool}", "input": arguments, **envelope}


def _email(address: str, key: str) -> dict[str, Any]:
    return {
        "tool_id": "acme:crm:validate_email_format",
        "input": {"email": address},
        "constraints": {"idempotency_key": key},
    }


_ENVELOPE = "I-REQ-ENVELOPE"
_NEW_CUSTOMER = {"name": "Golden", "email": "not-an-address"}
_ADA_AGAIN = {"name": "Ada Again", "email": "ada@example.com"}

CASES = (
    # success and its variants
    Case("success-read", _get_customer("C-1001"), 200, "success", None),
    Case(
        "success-dry-run",
        {"tool_id": "acme:crm:create_customer", "input": _NEW_CUSTOMER, "dry_run": True},
        200, "success", None,
    ),
    Case(
        "success-prep-two-phase", _fault("ok", tool="reserve"), 200, "success_prep", None,
        masked=("/output/reservation_id",),
    ),
    # I-REQ: the request is wrong
    Case(
        "i-req-envelope-fields",
        {"tool_id": 7, "input": [], "dry_run": "yes", "constraints": {"timeout_ms": 0}, "colour": "red"},
        400, "invalid_request", _ENVELOPE,
    ),
    Case("i-req-envelope-missing-tool", {"input": {}}, 400, "invalid_request", _ENVELOPE),
    Case("i-req-envelope-not-json", b'{"tool_id": ', 400, "invalid_request", _ENVELOPE),
    Case("i-req-envelope-not-object", b'["acme:crm:get_customer"]', 400, "invalid_request", _ENVELOPE),
    Case(
        "i-req-media-type", b'{"tool_id": "acme:crm:get_customer"}', 415, "invalid_request",
        "I-REQ-MEDIA-TYPE", headers={"content-type": "text/plain"},
    ),
    Case(
        "i-req-envelope-version-range", _get_customer("C-1001", tool_version="one"), 200, "invalid_request",
        _ENVELOPE,
    ),
    Case("i-req-too-large", b" " * (DEFAULT_MAX_BODY_BYTES + 1), 413, "invalid_request", "I-REQ-TOO-LARGE"),
    Case(
        "i-req-schema",
        {"tool_id": "acme:crm:search_customers", "input": {"q": 5, "limit": "many", "colour": "red"}},
        200, "invalid_request", "I-REQ-SCHEMA",
    ),
    Case(
        "i-req-unknown-tool", {"tool_id": "acme:crm:get_customers"}, 200, "invalid_request",
        "I-REQ-UNKNOWN-TOOL",
    ),
    Case(
        "i-req-upstream-not-found", _get_customer("C-9999"), 200, "terminal_error", "I-REQ-UPSTREAM-NOT-FOUND"
    ),
    Case(
        "i-req-upstream-rejected", {"tool_id": "acme:crm:create_customer", "input": _NEW_CUSTOMER},
        200, "terminal_error", "I-REQ-UPSTREAM-REJECTED",
    ),
    Case(
        "i-req-deadline-passed", _fault("ok", constraints={"deadline_unix_ms": 0}), 200, "invalid_request",
        "I-REQ-DEADLINE-PASSED", masked=("/error/message", "/error/details/now_unix_ms"),
    ),
    Case(
        "i-req-idempotency-mismatch", _email("b@example.com", "golden-key"), 200, "invalid_request",
        "I-REQ-IDEMPOTENCY-MISMATCH", before=(_email("a@example.com", "golden-key"),),
    ),
    # A-AUTH: an origin or credential is refused
    Case(
        "a-auth-origin", _get_customer("C-1001"), 403, "terminal_error", "A-AUTH-ORIGIN",
        headers={"origin": "http://attacker.example"},
    ),
    # P-PRECOND: well formed, cannot run now
    Case(
        "p-precond-approval-required",
        {"tool_id": "acme:billing:void_invoice", "input": _VOID, "dry_run": True},
        200, "terminal_error", "P-PRECOND-APPROVAL-REQUIRED",
    ),
    # pending: parked until an approver decides; nothing ran
    Case(
        "pending-awaiting-approval",
        {"tool_id": "acme:billing:void_invoice", "input": _VOID},
        200, "pending", None, masked=("/pending/token", "/pending/next_action"),
        masked_v1=("/error/message", "/error/details/approval_id", "/error/details/token",
                   "/error/details/next_action"),
    ),
    Case(
        "p-precond-conflict", {"tool_id": "acme:crm:create_customer", "input": _ADA_AGAIN},
        200, "terminal_error", "P-PRECOND-CONFLICT",
    ),
    Case(
        "p-precond-net-denied", _get_customer("C-1001", constraints={"net_allowlist": ["api.example.com"]}),
        200, "terminal_error", "P-PRECOND-NET-DENIED",
    ),
    Case(
        "p-precond-commit-token", {"commit_token": "ct_never-handed-out", "call_id": "golden-commit"},
        200, "terminal_error", "P-PRECOND-COMMIT-TOKEN", path="/v1/calls/commit",
    ),
    # C-CONTRACT: the asked version cannot be served
    Case(
        "c-contract-version-mismatch", _fault("ok", tool_version="^3"), 200, "terminal_error",
        "C-CONTRACT-VERSION-MISMATCH",
    ),
    Case(
        "c-contract-ambiguous-version", _fault("ok", tool_version=">=1.0.0"), 200, "terminal_error",
        "C-CONTRACT-AMBIGUOUS-VERSION",
    ),
    Case(
        "c-contract-digest-mismatch", _get_customer("C-1001", provenance={"digest": "0" * 64}),
        200, "terminal_error", "C-CONTRACT-DIGEST-MISMATCH",
    ),
    # R-*: retryable
    Case(
        "r-timeout", _fault("slow:800", constraints={"timeout_ms": 200, "retry_policy": _ONCE}),
        200, "retryable_error", "R-TIMEOUT-001",
        masked=("/error/message",),  # it names the measured time that was left
    ),
    Case(
        "r-upstream-429", _fault("429:2000", constraints={"retry_policy": _ONCE}),
        200, "retryable_error", "R-UPSTREAM-429",
    ),
    Case(
        "r-upstream-unavailable", _fault("503", constraints={"retry_policy": _ONCE}),
        200, "retryable_error", "R-UPSTREAM-UNAVAILABLE",
    ),
    Case(
        "r-upstream-connect", _get_customer("C-1001", api="crm-offline", constraints={"retry_policy": _ONCE}),
        200, "retryable_error", "R-UPSTREAM-CONNECT",
    ),
    # S-TOOL: the tool or its configuration failed
    Case("s-tool-upstream-fault", _fault("500"), 200, "terminal_error", "S-TOOL-UPSTREAM-FAULT"),
    Case(
        "s-tool-config-missing-secret", _get_customer("C-1001", api="crm-locked"), 200, "terminal_error",
        "S-TOOL-CONFIG",
    ),
    # D-DATA: the answer cannot be trusted
    Case(
        "d-data-output-schema", _get_customer("C-1001", api="crm-drifted"), 200, "terminal_error",
        "D-DATA-OUTPUT-SCHEMA",
    ),
    Case("d-data-malformed", _fault("malformed"), 200, "terminal_error", "D-DATA-MALFORMED"),
)


@dataclass(frozen=True)
class Backends:
    client: httpx2.Client
    replacements: dict[str, str]


def _contract_with(path: Path, **changes: Any) -> Path:
    """Rewrite a contract file in place: top-level changes and per-operation endpoint overrides."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    endpoints = changes.pop("endpoint_overrides", {})
    data.update(changes)
    for endpoint in data["endpoints"]:
        endpoint.update(endpoints.get(endpoint["operation_id"], {}))
    target = path.with_name(f"{data['name']}-{data['version']}.yaml")
    target.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return target


@pytest.fixture(scope="module")
def backends(backend_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backends]:
    assert not any(name in os.environ for name in EnvSecretResolver.variables(MISSING_SECRET))
    folder = tmp_path_factory.mktemp("golden")
    with serve_in_thread(fault_backend_app()) as fault_url:
        faults = []
        for version in ("1.0.0", "2.0.0"):
            faults.append(folder / f"faults-{version}.yaml")
            faults[-1].write_text(yaml.safe_dump(fault_contract(fault_url, version=version)), "utf-8")
        crm = demo_contract_file(folder, "crm", backend_url)
        contracts = [
            crm,
            demo_contract_file(folder, "billing", backend_url),
            *faults,
            _contract_with(crm, name="crm-offline", backend={"base_url": OFFLINE_URL}),
            _contract_with(
                crm,
                name="crm-drifted",
                endpoint_overrides={"get_customer": {"output_schema": DRIFTED_OUTPUT}},
            ),
            _contract_with(
                crm,
                name="crm-locked",
                backend={"base_url": backend_url, "auth": {"type": "bearer", "secret": MISSING_SECRET}},
            ),
        ]
        with serve_gateway(gateway_settings(folder / "data", contracts)) as running:
            replacements = {
                fault_url: "<fault-backend>",
                backend_url: "<demo-backend>",
                fault_url.removeprefix("http://"): "<fault-backend-host>",
                backend_url.removeprefix("http://"): "<demo-backend-host>",
            }
            yield Backends(running.client, replacements)


def send(client: httpx2.Client, case: Case, body: dict[str, Any] | bytes, version: int) -> httpx2.Response:
    headers = _headers(case, version)
    if isinstance(body, bytes):
        return client.post(case.path, content=body, headers={"content-type": "application/json", **headers})
    return client.post(case.path, json=body, headers=headers)


def _headers(case: Case, version: int) -> dict[str, str]:
    return {**case.headers, ENVELOPE_VERSION_HEADER: "2"} if version == 2 else dict(case.headers)


def normalised(
    result: dict[str, Any], case: Case, replacements: dict[str, str], version: int
) -> dict[str, Any]:
    """The parts of a result that must not change between runs."""
    kept = {k: v for k, v in result.items() if k not in ("call_id", "metrics")}
    if kept.get("provenance"):
        kept["provenance"]["digest"] = "<digest>"
    if kept.get("commit_token"):
        kept["commit_token"] = "<commit-token>"
    for pointer in case.varying(version):
        *parents, leaf = pointer.strip("/").split("/")
        node = kept
        for part in parents:
            node = node[part]
        node[leaf] = "<varies>"
    return _scrubbed(kept, replacements)


def _scrubbed(value: Any, replacements: dict[str, str]) -> Any:
    if isinstance(value, dict):
        return {k: _scrubbed(v, replacements) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrubbed(v, replacements) for v in value]
    if isinstance(value, str):
        for old, new in replacements.items():
            value = value.replace(old, new)
        return _DIGEST.sub("<digest>", _TIMESTAMP.sub("<timestamp>", value))
    return value


def _request_record(case: Case, version: int) -> dict[str, Any]:
    record: dict[str, Any] = {"method": "POST", "path": case.path}
    if headers := _headers(case, version):
        record["headers"] = headers
    if isinstance(case.body, bytes):
        shown = case.body.decode("latin-1") if len(case.body) <= 200 else f"<{len(case.body)} bytes>"
        record["raw_body"] = shown
    else:
        record["json"] = case.body
    if case.before:
        record["after"] = list(case.before)
    return record


def test_every_outcome_class_has_a_golden_case() -> None:
    covered = {class_of(c.code).prefix for c in CASES if c.code}
    produced_only_under_load = {"R-CAP"}  # concurrency limits: covered by the pipeline's own tests
    assert covered == {c.prefix for c in ERROR_CLASSES} - produced_only_under_load
    assert {c.status for c in CASES} == {
        "success", "success_prep", "pending", "invalid_request", "terminal_error", "retryable_error"
    }
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("version", [1, 2], ids=lambda v: f"v{v}")
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_golden(backends: Backends, case: Case, version: int) -> None:
    for earlier in case.before:
        assert assert_typed_result(backends.client.post(case.path, json=earlier))["status"] == "success"
    response = send(backends.client, case, case.body, version)
    assert response.status_code == case.http_status, response.text
    result = assert_typed_result(response)
    status, code = case.expected(version)
    assert (result["envelope_version"], result["status"]) == (version, status), result
    message = (result["error"] or {}).get("message", "")
    addresses = [*backends.replacements, OFFLINE_URL.removeprefix("http://")]
    assert not [a for a in addresses if a in message], f"a client message names a backend: {message}"
    assert (result["error"] or {}).get("code") == code, result["error"]
    actual = {
        "request": _request_record(case, version),
        "http_status": response.status_code,
        "result": normalised(result, case, backends.replacements, version),
    }
    folder = GOLDEN / "v1" if version == 1 else GOLDEN
    path = folder / f"{case.name}.json"
    if UPDATE:
        folder.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(actual, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    assert path.is_file(), f"{path} is missing: run {UPDATE_GOLDEN_VAR}=1 pytest {Path(__file__).name}"
    expected = json.loads(path.read_text(encoding="utf-8"))
    assert actual == expected, (
        f"{case.name} differs from {path.name}; if the change is intended, regenerate with "
        f"{UPDATE_GOLDEN_VAR}=1 and review the diff"
    )
