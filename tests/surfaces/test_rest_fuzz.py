"""Fuzzing `POST /v1/calls` of the real gateway: whatever arrives, a typed CallResult and never a 5xx.

Every response is checked against the published `call-result.schema.json`, its status against
its code's registered status. Envelope-shaped bodies are also checked against the published
`call-request.schema.json`: the gateway refuses an envelope exactly when that schema does.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from colonnade.calls.envelope_schemas import CALL_REQUEST
from colonnade.surfaces.envelope_parsing import DEFAULT_MAX_BODY_BYTES
from tests.surfaces.rest_harness import (
    assert_typed_result,
    demo_contract_file,
    gateway_settings,
    serve_gateway,
)

FUZZ = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
REQUEST_SCHEMA = Draft202012Validator(json.loads(CALL_REQUEST.path.read_text(encoding="utf-8")))
JSON_TYPE = {"content-type": "application/json"}
TOOLS = (
    "acme:crm:search_customers",
    "acme:crm:get_customer",
    "acme__crm__validate_email_format",
    "acme:billing:void_invoice",
    "acme:crm:create_customer",
    "acme:nothing:here",
    "",
)
ARGUMENTS = ("q", "limit", "customer_id", "email")

# Floats are never integral: JSON Schema counts 1.0 as an integer, the strict envelope model does not,
# and that difference in number models is not what this fuzzing looks for.
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: not f.is_integer())
    | st.text(max_size=40)
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=20,
)


def _objects(
    fields: dict[str, st.SearchStrategy[Any]], *, wild: bool, required: tuple[str, ...] = ()
) -> st.SearchStrategy[dict[str, Any]]:
    """Objects with some of `fields`; wild ones sometimes hold any JSON value and an unknown field."""
    if wild:
        fields = {name: st.one_of(valid, valid, json_values) for name, valid in fields.items()}
        fields["unexpected"] = json_values
    return st.fixed_dictionaries(
        {name: fields[name] for name in required},
        optional={name: value for name, value in fields.items() if name not in required},
    )


def _envelopes(*, wild: bool) -> st.SearchStrategy[dict[str, Any]]:
    """Plausible envelopes reach the pipeline (with boundary values); wild ones mostly do not."""
    retry_policy = _objects(
        {
            "max_attempts": st.integers(0, 11),
            "base_ms": st.integers(-1, 100),
            "cap_ms": st.integers(0, 200),
            "jitter": st.sampled_from(["none", "full", "half"]),
        },
        wild=wild,
    )
    context = _objects(
        {
            "actor_id": st.text(max_size=20) | st.none(),
            "scopes": st.lists(st.text(max_size=10), max_size=3),
            "trace_id": st.text(max_size=32),
            "locale": st.sampled_from(["en-GB", "de", None]),
        },
        wild=wild,
    )
    constraints = _objects(
        {
            "timeout_ms": st.integers(0, 5_000) | st.none(),
            "deadline_unix_ms": st.integers(-5, 10) | st.integers(2**40, 2**62),
            "idempotency_key": st.text(max_size=300) | st.none(),
            "net_allowlist": st.lists(st.sampled_from(["127.0.0.1", "api.example.com"]), max_size=2),
            "retry_policy": retry_policy | st.none(),
        },
        wild=wild,
    )
    return _objects(
        {
            "call_id": st.text(max_size=40),
            "tool_id": st.sampled_from(TOOLS),
            "tool_version": st.sampled_from(["1.0.0", "^1", "2.x", "nonsense", None]),
            "fn": st.text(max_size=10) | st.none(),
            "input": st.dictionaries(st.sampled_from(ARGUMENTS), json_values),
            "context": context,
            "constraints": constraints,
            "provenance": st.none() | st.dictionaries(st.text(max_size=8), json_values, max_size=2),
            "dry_run": st.booleans(),
        },
        wild=wild,
        required=() if wild else ("tool_id",),
    )


envelopes = _envelopes(wild=False) | _envelopes(wild=True)


@pytest.fixture(scope="module")
def client(backend_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx2.Client]:
    folder = tmp_path_factory.mktemp("fuzz")
    contracts = [demo_contract_file(folder, name, backend_url) for name in ("crm", "billing")]
    with serve_gateway(gateway_settings(folder / "data", contracts)) as running:
        yield running.client


def post(client: httpx2.Client, content: bytes, headers: dict[str, str] = JSON_TYPE) -> dict[str, Any]:
    return assert_typed_result(client.post("/v1/calls", content=content, headers=headers))


def refused_by_the_model(response: httpx2.Response, result: dict[str, Any]) -> bool:
    return response.status_code == 400 and result["error"]["code"] == "I-REQ-ENVELOPE"


@FUZZ
@given(envelopes)
def test_envelopes_are_refused_exactly_when_the_published_schema_refuses_them(
    client: httpx2.Client, envelope: dict[str, Any]
) -> None:
    response = client.post("/v1/calls", content=json.dumps(envelope).encode(), headers=JSON_TYPE)
    result = assert_typed_result(response)
    schema_problems = sorted(str(e.message) for e in REQUEST_SCHEMA.iter_errors(envelope))
    assert refused_by_the_model(response, result) == bool(schema_problems), (schema_problems, result)
    if schema_problems:
        assert len(result["error"]["details"]["violations"]) >= 1
    else:
        assert response.status_code == 200
    if isinstance(envelope.get("call_id"), str):
        assert result["call_id"] == envelope["call_id"]


@FUZZ
@given(json_values)
def test_any_json_value_gets_a_typed_answer(client: httpx2.Client, value: Any) -> None:
    result = post(client, json.dumps(value).encode())
    if not isinstance(value, dict):
        assert result["error"]["code"] == "I-REQ-ENVELOPE"
        assert [v["pointer"] for v in result["error"]["details"]["violations"]] == [""]


@FUZZ
@given(st.binary(max_size=512))
def test_arbitrary_bytes_get_a_typed_answer(client: httpx2.Client, body: bytes) -> None:
    result = post(client, body)
    assert result["status"] in ("invalid_request", "success", "terminal_error", "retryable_error")


@FUZZ
@given(st.binary(min_size=1, max_size=16))
def test_invalid_utf8_inside_strings_is_refused(client: httpx2.Client, raw: bytes) -> None:
    body = b'{"tool_id": "acme:crm:search_customers", "input": {"q": "' + raw.replace(b'"', b"") + b'"}}'
    result = post(client, body)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        assert result["error"]["code"] == "I-REQ-ENCODING"  # the edge's rule, the same on MCP
        return
    try:
        json.loads(text)
    except json.JSONDecodeError:
        assert result["error"]["code"] == "I-REQ-ENVELOPE"


@FUZZ
@given(st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=30))
def test_unicode_including_escaped_surrogates(client: httpx2.Client, text: str) -> None:
    envelope = {"call_id": text, "tool_id": "acme:crm:search_customers", "input": {"q": text[:50]}}
    escaped = json.dumps(envelope, ensure_ascii=True).encode("ascii")
    result = post(client, escaped)
    if any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        return  # lone surrogates are refused; adjacent ones decode as one character: either way typed
    assert result["call_id"] == text
    assert result["status"] in ("success", "invalid_request")
    raw = post(client, json.dumps(envelope, ensure_ascii=False).encode("utf-8"))
    assert raw["call_id"] == text


@FUZZ
@given(st.integers(min_value=1, max_value=3000))
def test_deep_nesting_is_bounded(client: httpx2.Client, depth: int) -> None:
    body = b'{"tool_id": "acme:crm:search_customers", "input": {"q": ' + b"[" * depth + b"]" * depth + b"}}"
    result = post(client, body)
    if depth >= 250:
        assert result["error"]["code"] == "I-REQ-ENVELOPE"
        assert "recursion limit" in result["error"]["message"]
    elif depth <= 100:
        assert result["error"]["code"] == "I-REQ-SCHEMA"


@settings(max_examples=8, deadline=None)
@given(st.integers(min_value=-64, max_value=64))
def test_bodies_around_the_size_limit(client: httpx2.Client, offset: int) -> None:
    head, tail = b'{"tool_id": "acme:crm:search_customers", "input": {"q": "', b'"}}'
    size = DEFAULT_MAX_BODY_BYTES + offset
    body = head + b"x" * (size - len(head) - len(tail)) + tail
    response = client.post("/v1/calls", content=body, headers=JSON_TYPE)
    result = assert_typed_result(response)
    if len(body) > DEFAULT_MAX_BODY_BYTES:
        assert (response.status_code, result["error"]["code"]) == (413, "I-REQ-TOO-LARGE")
    else:
        assert result["error"]["code"] == "I-REQ-SCHEMA"  # q has at most 100 characters


@FUZZ
@given(st.sampled_from(["", "text/plain", "application/xml", "multipart/form-data", "application/json"]))
def test_content_types(client: httpx2.Client, content_type: str) -> None:
    headers = {"content-type": content_type} if content_type else {}
    response = client.post("/v1/calls", content=b'{"tool_id": "acme:crm:search_customers"}', headers=headers)
    result = assert_typed_result(response)
    assert (response.status_code == 415) == (content_type != "application/json")
    assert (result["status"] == "success") == (content_type == "application/json")
