"""`POST /v1/calls` end to end: the real gateway under uvicorn, the real demo backend, both on loopback."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from starlette.applications import Starlette

from colonnade.calls.call import Call
from colonnade.calls.envelope import CallResult
from colonnade.calls.envelope_schemas import CALL_REQUEST, CALL_RESULT
from colonnade.calls.pipeline import Next, Pipeline
from colonnade.calls.service import CallService
from colonnade.catalog.catalog import Catalog
from colonnade.surfaces.edge import HttpEdge, OriginPolicy
from colonnade.surfaces.envelope_parsing import DEFAULT_MAX_BODY_BYTES as LIMIT
from colonnade.surfaces.rest.routes import SCHEMA_MEDIA_TYPE, RestSurface, render_refusal
from tests.support.repo import ROOT
from tests.surfaces.conftest import demo_contract
from tests.surfaces.rest_harness import (
    assert_typed_result,
    demo_contract_file,
    gateway_settings,
    serve_gateway,
)


@pytest.fixture(scope="module")
def client(backend_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx2.Client]:
    folder = tmp_path_factory.mktemp("gateway")
    contracts = [demo_contract_file(folder, name, backend_url) for name in ("crm", "billing")]
    with serve_gateway(gateway_settings(folder / "data", contracts)) as running:
        yield running.client


def call(client: httpx2.Client, body: dict[str, Any], expected_http: int = 200) -> dict[str, Any]:
    response = client.post("/v1/calls", json=body)
    assert response.status_code == expected_http, response.text
    return assert_typed_result(response)


def post_raw(client: httpx2.Client, content: bytes, **headers: str) -> httpx2.Response:
    return client.post("/v1/calls", content=content, headers={"content-type": "application/json", **headers})


def violations(result: dict[str, Any]) -> dict[str, str]:
    return {v["pointer"]: v["message"] for v in result["error"]["details"]["violations"]}


# -- outcomes of well-formed envelopes: always HTTP 200 ---------------------------------------------


def test_success_carries_output_provenance_and_the_callers_call_id(client: httpx2.Client) -> None:
    call_id = str(uuid.uuid4())
    result = call(
        client, {"call_id": call_id, "tool_id": "acme:crm:get_customer", "input": {"customer_id": "C-1001"}}
    )
    assert result["status"] == "success" and result["error"] is None
    assert result["call_id"] == call_id
    assert result["output"]["name"] == "Ada Example"
    assert result["provenance"]["tool_id"] == "acme:crm:get_customer"
    assert len(result["provenance"]["digest"]) == 64
    assert result["metrics"]["duration_ms"] > 0


def test_wire_names_are_accepted_and_call_ids_generated(client: httpx2.Client) -> None:
    result = call(client, {"tool_id": "acme__crm__search_customers", "input": {"q": "sample"}})
    assert result["status"] == "success"
    assert [c["id"] for c in result["output"]["customers"]] == ["C-1002"]
    assert uuid.UUID(result["call_id"])


def test_invalid_arguments_list_every_violation(client: httpx2.Client) -> None:
    result = call(
        client, {"tool_id": "acme:crm:search_customers", "input": {"q": 5, "limit": "many", "colour": "red"}}
    )
    assert result["status"] == "invalid_request"
    assert result["error"]["code"] == "I-REQ-SCHEMA"
    assert {"/q", "/limit", ""} <= set(violations(result))
    assert result["error"]["fix"]


def test_unknown_tool_is_a_typed_outcome(client: httpx2.Client) -> None:
    result = call(client, {"tool_id": "acme:crm:nope"})
    assert (result["status"], result["error"]["code"]) == ("invalid_request", "I-REQ-UNKNOWN-TOOL")


def test_destructive_tool_waits_for_approval_and_never_reaches_the_backend(
    client: httpx2.Client, backend_url: str
) -> None:
    void = {"invoice_id": "INV-2001", "reason": "In error"}
    result = call(client, {"tool_id": "acme:billing:void_invoice", "input": void, "envelope_version": 2})
    assert (result["status"], result["error"]) == ("pending", None)
    assert result["pending"]["reason"] == "awaiting_approval" and result["pending"]["token"].startswith("ap_")
    assert httpx2.get(f"{backend_url}/invoices/INV-2001").json()["status"] == "open"


def test_a_parked_call_reads_as_a_terminal_precondition_in_version_1(
    client: httpx2.Client, backend_url: str
) -> None:
    """Without asking, a REST caller gets envelope version 1: the approval's id and what to do, in details."""
    void = {"invoice_id": "INV-2001", "reason": "In error"}
    result = call(client, {"tool_id": "acme:billing:void_invoice", "input": void})
    assert result["envelope_version"] == 1 and "pending" not in result
    assert (result["status"], result["error"]["code"]) == ("terminal_error", "P-PRECOND-APPROVAL-PENDING")
    details = result["error"]["details"]
    assert details["approval_id"] == details["token"] and details["token"].startswith("ap_")
    assert f"/v1/approvals/{details['approval_id']}" in details["next_action"]
    assert httpx2.get(f"{backend_url}/invoices/INV-2001").json()["status"] == "open"


@pytest.mark.parametrize(
    ("headers", "body", "version"),
    [
        ({}, {}, 1),
        ({"Colonnade-Envelope-Version": "2"}, {}, 2),
        ({}, {"envelope_version": 2}, 2),
        ({"Colonnade-Envelope-Version": "1"}, {"envelope_version": 2}, 2),  # the body's field wins
    ],
)
def test_the_caller_chooses_the_envelope_version(
    client: httpx2.Client, headers: dict[str, str], body: dict[str, Any], version: int
) -> None:
    request = {"tool_id": "acme:crm:get_customer", "input": {"customer_id": "C-1001"}, **body}
    result = assert_typed_result(client.post("/v1/calls", json=request, headers=headers))
    assert (result["envelope_version"], result["status"]) == (version, "success")
    assert isinstance(result["metrics"]["duration_ms"], int) == (version == 1)


@pytest.mark.parametrize("value", ["3", "v2", "", "2.0"])
def test_an_unknown_envelope_version_header_is_a_typed_refusal(client: httpx2.Client, value: str) -> None:
    request = {"tool_id": "acme:crm:get_customer", "input": {"customer_id": "C-1001"}}
    response = client.post("/v1/calls", json=request, headers={"Colonnade-Envelope-Version": value})
    assert response.status_code == 400
    result = assert_typed_result(response)
    assert (result["envelope_version"], result["error"]["code"]) == (1, "I-REQ-ENVELOPE")
    assert result["error"]["details"]["header"] == "Colonnade-Envelope-Version"
    assert "must be 1 or 2" in result["error"]["message"]


def test_an_envelope_version_field_outside_the_range_lists_the_field(client: httpx2.Client) -> None:
    result = call(client, {"tool_id": "acme:crm:get_customer", "envelope_version": 3}, 400)
    assert "/envelope_version" in violations(result)


def test_backend_not_found_carries_the_backends_message(client: httpx2.Client) -> None:
    result = call(client, {"tool_id": "acme:crm:get_customer", "input": {"customer_id": "C-9999"}})
    assert (result["status"], result["error"]["code"]) == ("terminal_error", "I-REQ-UPSTREAM-NOT-FOUND")
    assert "C-9999" in result["error"]["message"]
    assert result["error"]["details"]["upstream_status"] == 404


def test_dry_run_validates_without_executing(client: httpx2.Client, backend_url: str) -> None:
    before = httpx2.get(f"{backend_url}/customers", params={"q": "Dry Rest"}).json()
    body = {
        "tool_id": "acme:crm:create_customer",
        "input": {"name": "Dry Rest", "email": "dry.rest@example.com"},
        "dry_run": True,
    }
    result = call(client, body)
    assert result["status"] == "success" and result["output"] is None
    assert result["side_effects"] == []
    assert any("dry run" in w for w in result["warnings"])
    assert httpx2.get(f"{backend_url}/customers", params={"q": "Dry Rest"}).json() == before
    invalid = call(client, {**body, "input": {"name": "Dry Rest"}})
    assert invalid["error"]["code"] == "I-REQ-SCHEMA"


# -- envelopes that never reach the pipeline: typed results, 4xx ----------------------------------


def test_malformed_envelope_lists_every_violation_and_echoes_the_call_id(client: httpx2.Client) -> None:
    body = {
        "call_id": "call-from-the-caller",
        "tool_id": 5,
        "input": [],
        "dry_run": "yes",
        "context": {"scopes": "all"},
        "constraints": {"timeout_ms": 0, "retry_policy": {"jitter": "some"}},
        "colour": "red",
    }
    result = call(client, body, expected_http=400)
    assert result["call_id"] == "call-from-the-caller"
    assert (result["status"], result["error"]["code"]) == ("invalid_request", "I-REQ-ENVELOPE")
    found = violations(result)
    assert set(found) == {
        "/tool_id",
        "/input",
        "/dry_run",
        "/context/scopes",
        "/constraints/timeout_ms",
        "/constraints/retry_policy/jitter",
        "/colour",
    }
    assert result["error"]["details"]["violation_count"] == 7
    assert "allowed here: call_id, tool_id" in found["/colour"]
    assert "(got string)" in found["/dry_run"]


def test_types_are_strict_as_documented(client: httpx2.Client) -> None:
    body = {"tool_id": "acme:crm:search_customers", "constraints": {"timeout_ms": "5000"}}
    assert set(violations(call(client, body, expected_http=400))) == {"/constraints/timeout_ms"}
    fraction = {**body, "constraints": {"timeout_ms": 5000.0}}
    assert set(violations(call(client, fraction, expected_http=400))) == {"/constraints/timeout_ms"}
    assert call(client, {**body, "constraints": {"timeout_ms": 5000}})["status"] == "success"


def test_missing_tool_id_is_named(client: httpx2.Client) -> None:
    result = call(client, {"input": {}}, expected_http=400)
    assert violations(result) == {"/tool_id": "required field 'tool_id' is missing"}
    assert uuid.UUID(result["call_id"])


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (b"", "the body is empty"),
        (b'{"tool_id": ', "not valid JSON"),
        (b"[1, 2]", "not array"),
        (b'"acme:crm:get_customer"', "not string"),
        (b'{"tool_id": "x", "input": {"n": NaN}}', "not valid JSON"),
        (b'{"tool_id": "\\ud800"}', "not valid JSON"),
        (b"[" * 300 + b"]" * 300, "recursion limit"),
    ],
    ids=["empty", "truncated", "array", "string", "nan", "lone-surrogate", "deep"],
)
def test_bodies_that_are_not_an_envelope_object(client: httpx2.Client, content: bytes, fragment: str) -> None:
    response = post_raw(client, content)
    assert response.status_code == 400
    result = assert_typed_result(response)
    assert result["error"]["code"] == "I-REQ-ENVELOPE"
    [violation] = result["error"]["details"]["violations"]
    assert violation["pointer"] == "" and fragment in violation["message"]


def test_unicode_survives_the_round_trip(client: httpx2.Client) -> None:
    text = "Zoë 😀 \\u00e9 日本"
    body = json.dumps({"call_id": text, "tool_id": "acme:crm:search_customers", "input": {"q": text}})
    result = assert_typed_result(post_raw(client, body.encode("utf-8")))
    assert result["call_id"] == text and result["status"] == "success"
    escaped = json.dumps({"call_id": text, "tool_id": "x"}, ensure_ascii=True).encode("ascii")
    assert assert_typed_result(post_raw(client, escaped))["call_id"] == text


def test_body_over_the_limit_is_refused_before_it_is_read(client: httpx2.Client) -> None:
    declared = post_raw(client, b" " * (LIMIT + 1))
    assert declared.status_code == 413
    result = assert_typed_result(declared)
    assert result["error"]["code"] == "I-REQ-TOO-LARGE"
    assert result["error"]["details"]["limit_bytes"] == LIMIT

    def chunks() -> Iterator[bytes]:
        yield b'{"tool_id": "acme:crm:search_customers", "input": {"q": "'
        for _ in range(LIMIT // 1024 + 1):
            yield b"x" * 1024
        yield b'"}}'

    streamed = client.post("/v1/calls", content=chunks(), headers={"content-type": "application/json"})
    assert streamed.status_code == 413
    assert assert_typed_result(streamed)["error"]["code"] == "I-REQ-TOO-LARGE"
    assert call(client, {"tool_id": "acme:crm:search_customers", "input": {"q": "x" * 100}})["status"] == (
        "success"
    )


def test_only_json_bodies_are_accepted(client: httpx2.Client) -> None:
    body = b'{"tool_id": "acme:crm:search_customers"}'
    for content_type in ("text/plain", "application/x-www-form-urlencoded"):
        response = client.post("/v1/calls", content=body, headers={"content-type": content_type})
        assert response.status_code == 415
        result = assert_typed_result(response)
        assert "Content-Type: application/json" in result["error"]["message"]
    with_charset = {"content-type": "application/json; charset=utf-8"}
    charset = client.post("/v1/calls", content=body, headers=with_charset)
    assert assert_typed_result(charset)["status"] == "success"


def test_foreign_hosts_and_origins_are_refused(client: httpx2.Client) -> None:
    body = {"tool_id": "acme:crm:search_customers"}
    host = client.post("/v1/calls", json=body, headers={"host": "attacker.example"})
    assert host.status_code == 421
    assert assert_typed_result(host)["error"]["code"] == "A-AUTH-ORIGIN"
    origin = client.post("/v1/calls", json=body, headers={"origin": "http://attacker.example"})
    assert origin.status_code == 403
    assert assert_typed_result(origin)["error"]["details"] == {"header": "origin"}
    listing = client.get("/v1/tools", headers={"origin": "http://attacker.example"})
    assert listing.status_code == 403 and listing.json()["error"]["code"] == "A-AUTH-ORIGIN"
    same_origin = client.post("/v1/calls", json=body, headers={"origin": str(client.base_url).rstrip("/")})
    assert assert_typed_result(same_origin)["status"] == "success"


def test_calls_take_posts_only(client: httpx2.Client) -> None:
    """`POST /v1/calls` is served past the router (`HttpEdge.direct`); its other methods still are not."""
    for method in ("GET", "PUT", "DELETE"):
        assert client.request(method, "/v1/calls").status_code == 405


# -- schemas ----------------------------------------------------------------------------------------


def test_schema_endpoints_serve_the_checked_in_files(client: httpx2.Client) -> None:
    for envelope in (CALL_REQUEST, CALL_RESULT):
        response = client.get(f"/v1/schemas/{envelope.name}.json")
        assert response.status_code == 200
        assert response.headers["content-type"] == SCHEMA_MEDIA_TYPE
        assert response.content == envelope.path.read_bytes()
    assert client.get("/v1/schemas/uac.json").status_code == 404


# -- a fault inside the gateway still yields a typed result ---------------------------------------


class _Broken:
    """A stage with a bug: the service promises never to raise, so this proves the surface's last line."""

    async def __call__(self, call: Call, next: Next) -> CallResult:
        raise RuntimeError("a bug in a stage")


async def test_a_fault_inside_the_gateway_is_a_typed_500() -> None:
    catalog = Catalog()
    catalog.publish(demo_contract("crm", "http://127.0.0.1:9"))
    rest = RestSurface(catalog, CallService(Pipeline([_Broken()])))
    transport = httpx2.ASGITransport(app=Starlette(routes=rest.routes()))
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        response = await client.post("/v1/calls", json={"call_id": "c-1", "tool_id": "acme:crm:get_customer"})
    assert response.status_code == 500
    result = response.json()
    assert (result["call_id"], result["status"]) == ("c-1", "terminal_error")
    assert result["error"]["code"] == "S-TOOL-INTERNAL"


def test_the_documented_sample_call_is_what_the_api_answers(client: httpx2.Client) -> None:
    """docs/rest-api.md's first result, against a real call: same fields, same nulls (cpu_ms is null)."""
    doc = (ROOT / "docs" / "rest-api.md").read_text(encoding="utf-8")
    section = doc[doc.index("## Calling a tool: `POST /v1/calls`") :]
    sample = re.search(r"^```json\n(.*?)^```$", section, re.S | re.M)
    assert sample is not None
    shown = json.loads(sample.group(1))
    body = {"call_id": "demo-1", "tool_id": "acme:crm:get_customer", "input": {"customer_id": "C-1001"}}
    real = call(client, body)
    assert set(shown) == set(real)
    for field in ("call_id", "status", "output"):
        assert shown[field] == real[field], field
    nulls = {key: value is None for key, value in real["metrics"].items()}
    assert {key: value is None for key, value in shown["metrics"].items()} == nulls
    assert set(shown["provenance"]) == set(real["provenance"])


async def test_the_surfaces_own_limit_holds_behind_an_edge_that_allows_more() -> None:
    """The call route takes the body the edge already read only when it fits the route's own limit."""
    catalog = Catalog()
    catalog.publish(demo_contract("crm", "http://127.0.0.1:9"))
    rest = RestSurface(catalog, CallService(Pipeline([_Broken()])), max_body_bytes=64)
    edge = HttpEdge(
        Starlette(routes=rest.routes()),
        origins=OriginPolicy.for_bind("127.0.0.1"),
        renderers={"/v1": render_refusal},
        json_prefixes=("/v1",),
    )
    transport = httpx2.ASGITransport(app=edge)
    body = {"call_id": "c-2", "tool_id": "acme:crm:get_customer", "input": {"customer_id": "C" * 64}}
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8765") as client:
        response = await client.post("/v1/calls", json=body)
        fitting = await client.post("/v1/calls", json={"call_id": "c-3", "tool_id": "acme:crm:get_customer"})
    assert response.status_code == 413
    assert assert_typed_result(response)["error"]["details"]["limit_bytes"] == 64
    assert (fitting.status_code, fitting.json()["call_id"]) == (500, "c-3")  # reached the (broken) pipeline
