"""The request the backend actually receives: path, query, headers, body and auth."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from typing import Any

import pytest

from colonnade.adapters.http import HttpAdapter
from colonnade.adapters.outcome import MISCONFIGURED, SCHEMA, AdapterOutcome, OutcomeKind
from colonnade.adapters.secrets import EnvSecretResolver
from colonnade.catalog.http_binding import HttpBinding, ParamLocation, ParamSpec
from colonnade.contracts.model import AuthType, BackendAuth

PATH, QUERY, HEADER, BODY, RAW = (
    ParamLocation.PATH,
    ParamLocation.QUERY,
    ParamLocation.HEADER,
    ParamLocation.BODY,
    ParamLocation.RAW_BODY,
)

SECRETS = {
    "COLONNADE_SECRET_CRM_TOKEN": "tok-123",
    "billing.key": "key-456",
    "COLONNADE_SECRET_LEGACY_LOGIN": "ada:s3cr:et",
    "COLONNADE_SECRET_NO_COLON": "justtext",
    "COLONNADE_SECRET_BROKEN": "line\u00e9",
}


@pytest.fixture
async def adapter() -> AsyncIterator[HttpAdapter]:
    async with HttpAdapter(secrets=EnvSecretResolver(SECRETS), default_timeout_s=5) as adapter:
        yield adapter


def binding(
    base_url: str, method: str, path: str, *params: tuple[str, ParamLocation, str], **extra: Any
) -> HttpBinding:
    specs = tuple(ParamSpec(name, location, wire) for name, location, wire in params)
    return HttpBinding(base_url=base_url, method=method, path=path, params=specs, **extra)


def echoed(outcome: AdapterOutcome) -> dict[str, Any]:
    assert outcome.kind is OutcomeKind.SUCCESS, outcome
    assert isinstance(outcome.body, dict)
    return outcome.body


@pytest.mark.parametrize(
    ("value", "raw_segment"),
    [
        ("a/b", "a%2Fb"),
        ("x?y#z", "x%3Fy%23z"),
        ("with space", "with%20space"),
        ("\u00fcn\u00ef\u00e7\u00f8d\u00e9", "%C3%BCn%C3%AF%C3%A7%C3%B8d%C3%A9"),
        ("100%", "100%25"),
        ("%2F", "%252F"),
        ("..", "%2E%2E"),
        (".", "%2E"),
        ("a.b", "a.b"),
        (42, "42"),
        (True, "true"),
    ],
)
async def test_path_values_are_one_encoded_segment(
    adapter: HttpAdapter, backend_url: str, value: Any, raw_segment: str
) -> None:
    op = binding(backend_url, "GET", "/echo/items/{id}/tail", ("id", PATH, "id"))

    seen = echoed(await adapter.execute(op, {"id": value}))

    assert seen["raw_path"] == f"/echo/items/{raw_segment}/tail"
    assert seen["path"] == f"/echo/items/{value if not isinstance(value, bool) else 'true'}/tail"


async def test_path_parameter_uses_its_wire_name_and_base_path(
    adapter: HttpAdapter, backend_url: str
) -> None:
    op = binding(backend_url + "/echo/", "GET", "/v1/{customerId}/orders", ("customer", PATH, "customerId"))

    seen = echoed(await adapter.execute(op, {"customer": "c-1"}))

    assert seen["raw_path"] == "/echo/v1/c-1/orders"


@pytest.mark.parametrize("arguments", [{}, {"id": None}], ids=["absent", "null"])
async def test_missing_path_value_is_refused_before_sending(
    adapter: HttpAdapter, backend_url: str, arguments: dict[str, Any]
) -> None:
    op = binding(backend_url, "DELETE", "/echo/items/{id}", ("id", PATH, "id"))

    outcome = await adapter.execute(op, arguments)

    assert outcome.kind is OutcomeKind.TERMINAL_ERROR
    assert outcome.error_code == SCHEMA
    assert outcome.status_code is None
    assert "'id' is missing" in (outcome.message or "")


async def test_empty_path_value_is_refused_because_it_would_address_the_collection(
    adapter: HttpAdapter, backend_url: str
) -> None:
    op = binding(backend_url, "DELETE", "/echo/items/{id}", ("id", PATH, "id"))

    outcome = await adapter.execute(op, {"id": ""})

    assert outcome.error_code == SCHEMA
    assert "'id' is empty" in (outcome.message or "")


async def test_query_lists_repeat_keys_and_booleans_are_lowercase(
    adapter: HttpAdapter, backend_url: str
) -> None:
    op = binding(
        backend_url,
        "GET",
        "/echo/search",
        ("tags", QUERY, "tag"),
        ("active", QUERY, "active"),
        ("limit", QUERY, "limit"),
        ("q", QUERY, "q"),
        ("filter", QUERY, "filter"),
        ("cursor", QUERY, "cursor"),
    )

    seen = echoed(
        await adapter.execute(
            op,
            {
                "tags": ["red", "blue", True],
                "active": False,
                "limit": 10,
                "q": "a&b=c d",
                "filter": {"city": "Zürich"},
                "cursor": None,
            },
        )
    )

    assert seen["query"] == [
        ["tag", "red"],
        ["tag", "blue"],
        ["tag", "true"],
        ["active", "false"],
        ["limit", "10"],
        ["q", "a&b=c d"],
        ["filter", '{"city":"Zürich"}'],
    ]
    assert seen["method"] == "GET"
    assert seen["body"] is None


async def test_header_values_are_stringified(adapter: HttpAdapter, backend_url: str) -> None:
    op = binding(
        backend_url,
        "GET",
        "/echo/h",
        ("request_id", HEADER, "X-Request-Id"),
        ("dry", HEADER, "X-Dry-Run"),
        ("attempt", HEADER, "X-Attempt"),
        ("absent", HEADER, "X-Absent"),
    )

    seen = echoed(
        await adapter.execute(op, {"request_id": " r-1 ", "dry": True, "attempt": 3, "absent": None})
    )

    headers = seen["headers"]
    assert headers["x-request-id"] == "r-1"
    assert headers["x-dry-run"] == "true"
    assert headers["x-attempt"] == "3"
    assert "x-absent" not in headers
    assert headers["accept"] == "application/json"
    assert headers["user-agent"].startswith("colonnade/")


@pytest.mark.parametrize("value", ["line\r\nX-Injected: 1", "caf\u00e9"])
async def test_header_value_that_a_header_cannot_carry_is_refused(
    adapter: HttpAdapter, backend_url: str, value: str
) -> None:
    op = binding(backend_url, "GET", "/echo/h", ("note", HEADER, "X-Note"))

    outcome = await adapter.execute(op, {"note": value})

    assert outcome.error_code == SCHEMA
    assert "X-Note" in (outcome.message or "")


async def test_body_collects_only_present_body_arguments(adapter: HttpAdapter, backend_url: str) -> None:
    op = binding(
        backend_url,
        "POST",
        "/echo/customers",
        ("name", BODY, "name"),
        ("email", BODY, "emailAddress"),
        ("tags", BODY, "tags"),
        ("notes", BODY, "notes"),
        ("verbose", QUERY, "verbose"),
    )

    seen = echoed(
        await adapter.execute(
            op, {"name": "Ada Ł", "email": "ada@example.test", "tags": ["vip"], "undeclared": "ignored"}
        )
    )

    assert seen["body"] == {"name": "Ada Ł", "emailAddress": "ada@example.test", "tags": ["vip"]}
    assert seen["headers"]["content-type"] == "application/json"
    assert seen["query"] == []


async def test_no_body_arguments_means_no_body(adapter: HttpAdapter, backend_url: str) -> None:
    op = binding(backend_url, "POST", "/echo/ping", ("note", BODY, "note"))

    seen = echoed(await adapter.execute(op, {}))

    assert seen["body"] is None
    assert "content-type" not in seen["headers"]


@pytest.mark.parametrize("raw", [[1, 2, {"three": 3}], {"whole": True}, "text", 0])
async def test_raw_body_is_the_whole_json_body(adapter: HttpAdapter, backend_url: str, raw: Any) -> None:
    op = binding(backend_url, "PUT", "/echo/bulk", ("items", RAW, "items"), ("other", BODY, "other"))

    seen = echoed(await adapter.execute(op, {"items": raw, "other": "dropped"}))

    assert seen["method"] == "PUT"
    assert seen["body"] == raw


async def test_bearer_auth_from_prefixed_variable(adapter: HttpAdapter, backend_url: str) -> None:
    auth = BackendAuth(type=AuthType.BEARER, secret="crm_token")
    op = binding(backend_url, "GET", "/echo/me", auth=auth)

    seen = echoed(await adapter.execute(op, {}))

    assert seen["headers"]["authorization"] == "Bearer tok-123"


async def test_api_key_header_from_plain_variable(adapter: HttpAdapter, backend_url: str) -> None:
    auth = BackendAuth(type=AuthType.API_KEY_HEADER, secret="billing.key", header="X-Billing-Key")
    op = binding(backend_url, "GET", "/echo/me", auth=auth)

    seen = echoed(await adapter.execute(op, {}))

    assert seen["headers"]["x-billing-key"] == "key-456"
    assert "authorization" not in seen["headers"]


async def test_api_key_header_defaults_to_x_api_key(adapter: HttpAdapter, backend_url: str) -> None:
    op = binding(
        backend_url, "GET", "/echo/me", auth=BackendAuth(type=AuthType.API_KEY_HEADER, secret="crm_token")
    )

    seen = echoed(await adapter.execute(op, {}))

    assert seen["headers"]["x-api-key"] == "tok-123"


async def test_basic_auth_splits_user_and_password(adapter: HttpAdapter, backend_url: str) -> None:
    op = binding(backend_url, "GET", "/echo/me", auth=BackendAuth(type=AuthType.BASIC, secret="legacy-login"))

    seen = echoed(await adapter.execute(op, {}))

    scheme, token = seen["headers"]["authorization"].split(" ")
    assert scheme == "Basic"
    assert base64.b64decode(token).decode() == "ada:s3cr:et"


async def test_auth_wins_over_a_header_argument_of_the_same_name(
    adapter: HttpAdapter, backend_url: str
) -> None:
    auth = BackendAuth(type=AuthType.BEARER, secret="crm_token")
    op = binding(backend_url, "GET", "/echo/me", ("forged", HEADER, "Authorization"), auth=auth)

    seen = echoed(await adapter.execute(op, {"forged": "Bearer stolen"}))

    assert seen["headers"]["authorization"] == "Bearer tok-123"


async def test_missing_secret_names_it_and_says_how_to_set_it(adapter: HttpAdapter, backend_url: str) -> None:
    op = binding(backend_url, "GET", "/echo/me", auth=BackendAuth(type=AuthType.BEARER, secret="erp.token"))

    outcome = await adapter.execute(op, {})

    assert outcome.kind is OutcomeKind.TERMINAL_ERROR
    assert outcome.error_code == MISCONFIGURED
    assert outcome.status_code is None
    message = outcome.message or ""
    assert "'erp.token' is not set" in message
    assert "COLONNADE_SECRET_ERP_TOKEN" in message


@pytest.mark.parametrize(
    ("auth", "needle"),
    [
        (BackendAuth(type=AuthType.BASIC, secret="no_colon"), "user:password"),
        (BackendAuth(type=AuthType.BEARER, secret="broken"), "printable ASCII"),
    ],
)
async def test_unusable_secret_is_reported_without_its_value(
    adapter: HttpAdapter, backend_url: str, auth: BackendAuth, needle: str
) -> None:
    outcome = await adapter.execute(binding(backend_url, "GET", "/echo/me", auth=auth), {})

    assert outcome.error_code == MISCONFIGURED
    message = outcome.message or ""
    assert needle in message
    assert SECRETS[f"COLONNADE_SECRET_{auth.secret.upper()}"] not in message


@pytest.mark.parametrize("name", ["Transfer-Encoding", "Content-Length", "Connection"])
async def test_header_the_http_client_manages_cannot_be_an_argument(
    adapter: HttpAdapter, backend_url: str, name: str
) -> None:
    op = binding(backend_url, "POST", "/echo/h", ("framing", HEADER, name), ("n", BODY, "n"))

    outcome = await adapter.execute(op, {"framing": "chunked", "n": 1})

    assert outcome.error_code == MISCONFIGURED
    assert name in (outcome.message or "")


async def test_caller_header_that_would_split_the_request_is_refused_unsent(
    adapter: HttpAdapter, backend_url: str
) -> None:
    outcome = await adapter.execute(
        binding(backend_url, "POST", "/echo/h"), {}, headers={"Idempotency-Key": "k\r\nX-Injected: 1"}
    )

    assert outcome.kind is OutcomeKind.TERMINAL_ERROR
    assert outcome.error_code == SCHEMA
    assert "Idempotency-Key" in (outcome.message or "")


async def test_caller_headers_are_sent(adapter: HttpAdapter, backend_url: str) -> None:
    seen = echoed(
        await adapter.execute(binding(backend_url, "POST", "/echo/h"), {}, headers={"Idempotency-Key": "k-9"})
    )

    assert seen["headers"]["idempotency-key"] == "k-9"
