"""How every kind of backend answer and failure becomes an AdapterOutcome."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import TYPE_CHECKING, Any

import pytest

from colonnade.adapters.http import HttpAdapter
from colonnade.adapters.outcome import (
    ADAPTER_ERROR_CODES,
    AUTH_REFUSED,
    CONFLICT,
    MALFORMED,
    MISCONFIGURED,
    NOT_FOUND,
    RATE_LIMITED,
    REJECTED,
    SERVER_FAULT,
    TIMEOUT,
    UNAVAILABLE,
    UNREACHABLE,
    AdapterOutcome,
    OutcomeKind,
)
from colonnade.calls.call_errors import REGISTRY
from colonnade.catalog.http_binding import HttpBinding, ParamLocation, ParamSpec

if TYPE_CHECKING:
    from tests.adapters.conftest import RudeServer

RESPOND = HttpBinding(
    base_url="http://placeholder",
    method="POST",
    path="/respond/{code}",
    params=(
        ParamSpec("code", ParamLocation.PATH, "code"),
        ParamSpec("body", ParamLocation.QUERY, "body"),
        ParamSpec("header", ParamLocation.QUERY, "header"),
    ),
)
JSON_TYPE = "content-type:application/json"


@pytest.fixture
async def adapter() -> AsyncIterator[HttpAdapter]:
    async with HttpAdapter(default_timeout_s=5) as adapter:
        yield adapter


async def respond(
    adapter: HttpAdapter, backend_url: str, code: int, body: str = "", *headers: str
) -> AdapterOutcome:
    """Ask the backend for exactly this status, body and headers."""
    op = HttpBinding(**{**_fields(RESPOND), "base_url": backend_url})
    return await adapter.execute(op, {"code": code, "body": body, "header": list(headers)})


def _fields(binding: HttpBinding) -> dict[str, Any]:
    return {name: getattr(binding, name) for name in HttpBinding.__dataclass_fields__}


def get(base_url: str, path: str, timeout_ms: int | None = None) -> HttpBinding:
    return HttpBinding(base_url=base_url, method="GET", path=path, timeout_ms=timeout_ms, params=QUERY_PARAMS)


QUERY_PARAMS = tuple(ParamSpec(name, ParamLocation.QUERY, name) for name in ("seconds", "bytes", "chunked"))


async def test_json_success_is_parsed(adapter: HttpAdapter, backend_url: str) -> None:
    outcome = await respond(adapter, backend_url, 200, '{"id": 7, "name": "Ada"}', JSON_TYPE)

    assert outcome.kind is OutcomeKind.SUCCESS
    assert outcome.ok
    assert outcome.status_code == 200
    assert outcome.body == {"id": 7, "name": "Ada"}
    assert outcome.error_code is None
    assert outcome.message is None
    assert outcome.duration_ms > 0


async def test_problem_json_counts_as_json(adapter: HttpAdapter, backend_url: str) -> None:
    outcome = await respond(adapter, backend_url, 201, "[1, 2]", "content-type:application/problem+json")

    assert outcome.kind is OutcomeKind.SUCCESS
    assert outcome.status_code == 201
    assert outcome.body == [1, 2]


async def test_text_success_is_text(adapter: HttpAdapter, backend_url: str) -> None:
    outcome = await respond(adapter, backend_url, 200, "plain words ü")

    assert outcome.kind is OutcomeKind.SUCCESS
    assert outcome.body == "plain words ü"


async def test_no_content_is_none(adapter: HttpAdapter, backend_url: str) -> None:
    outcome = await respond(adapter, backend_url, 204, "", JSON_TYPE)

    assert outcome.kind is OutcomeKind.SUCCESS
    assert outcome.status_code == 204
    assert outcome.body is None


async def test_success_with_malformed_json_is_a_data_error(adapter: HttpAdapter, backend_url: str) -> None:
    outcome = await respond(adapter, backend_url, 200, '{"id": 7,', JSON_TYPE)

    assert outcome.kind is OutcomeKind.TERMINAL_ERROR
    assert outcome.error_code == MALFORMED
    assert outcome.status_code == 200
    assert outcome.body == '{"id": 7,'
    assert "not valid JSON" in (outcome.message or "")


@pytest.mark.parametrize(
    ("status", "code"),
    [
        (400, REJECTED),
        (405, REJECTED),
        (422, REJECTED),
        (401, AUTH_REFUSED),
        (403, AUTH_REFUSED),
        (404, NOT_FOUND),
        (410, NOT_FOUND),
        (409, CONFLICT),
        (412, CONFLICT),
        (500, SERVER_FAULT),
        (501, SERVER_FAULT),
    ],
)
async def test_client_and_server_errors_are_terminal_with_the_backends_message(
    adapter: HttpAdapter, backend_url: str, status: int, code: str
) -> None:
    body = json.dumps({"message": f"backend says {status}", "field": "email"})

    outcome = await respond(adapter, backend_url, status, body, JSON_TYPE)

    assert outcome.kind is OutcomeKind.TERMINAL_ERROR
    assert outcome.status_code == status
    assert outcome.error_code == code
    assert outcome.message == f"backend says {status}"
    assert outcome.body == {"message": f"backend says {status}", "field": "email"}
    assert outcome.retry_after_ms is None


@pytest.mark.parametrize(
    ("body", "headers", "message"),
    [
        ('{"error": {"code": 17, "message": "quota used up"}}', (JSON_TYPE,), "quota used up"),
        ('{"detail": [{"loc": ["body", "email"], "msg": "field required"}]}', (JSON_TYPE,), "field required"),
        ('{"error": "invalid_grant", "error_description": "code expired"}', (JSON_TYPE,), "code expired"),
        ("No such order", (), "No such order"),
        (
            "<html><body>nginx</body></html>",
            ("content-type:text/html",),
            "the backend answered 400 Bad Request",
        ),
        ('{"status": "nope"}', (JSON_TYPE,), "the backend answered 400 Bad Request"),
        ("{broken", (JSON_TYPE,), "{broken"),
    ],
)
async def test_backend_message_is_found_where_backends_put_it(
    adapter: HttpAdapter, backend_url: str, body: str, headers: tuple[str, ...], message: str
) -> None:
    outcome = await respond(adapter, backend_url, 400, body, *headers)

    assert outcome.error_code == REJECTED
    assert outcome.message == message


@pytest.mark.parametrize(
    ("status", "code"), [(429, RATE_LIMITED), (503, UNAVAILABLE), (502, UNAVAILABLE), (504, UNAVAILABLE)]
)
async def test_overload_statuses_are_retryable_with_retry_after_seconds(
    adapter: HttpAdapter, backend_url: str, status: int, code: str
) -> None:
    outcome = await respond(
        adapter, backend_url, status, '{"message": "slow down"}', JSON_TYPE, "retry-after:7"
    )

    assert outcome.kind is OutcomeKind.RETRYABLE_ERROR
    assert outcome.status_code == status
    assert outcome.error_code == code
    assert outcome.retry_after_ms == 7000
    assert outcome.message == "slow down"


async def test_retry_after_http_date_becomes_milliseconds_from_now(
    adapter: HttpAdapter, backend_url: str
) -> None:
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)

    outcome = await respond(adapter, backend_url, 503, "", f"retry-after:{when}")

    assert outcome.kind is OutcomeKind.RETRYABLE_ERROR
    assert outcome.retry_after_ms is not None
    assert 25_000 <= outcome.retry_after_ms <= 30_000


async def test_retryable_without_retry_after_has_none(adapter: HttpAdapter, backend_url: str) -> None:
    outcome = await respond(adapter, backend_url, 429, "")

    assert outcome.kind is OutcomeKind.RETRYABLE_ERROR
    assert outcome.retry_after_ms is None
    assert outcome.message == "the backend answered 429 Too Many Requests"


async def test_request_timeout_status_is_retryable(adapter: HttpAdapter, backend_url: str) -> None:
    outcome = await respond(adapter, backend_url, 408, "")

    assert outcome.kind is OutcomeKind.RETRYABLE_ERROR
    assert outcome.error_code == UNAVAILABLE


async def test_redirect_is_a_configuration_error_whose_target_is_logged(
    adapter: HttpAdapter, backend_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="colonnade.adapters"):
        outcome = await respond(adapter, backend_url, 301, "", "location:https://api.example.test/v2")

    assert outcome.kind is OutcomeKind.TERMINAL_ERROR
    assert outcome.error_code == MISCONFIGURED
    assert "redirected (301)" in (outcome.message or "") and "base_url" in (outcome.message or "")
    assert "https://api.example.test/v2" in caplog.text


async def test_slow_backend_ends_with_a_timeout_outcome(adapter: HttpAdapter, backend_url: str) -> None:
    started = time.monotonic()

    outcome = await adapter.execute(get(backend_url, "/slow"), {"seconds": 10}, timeout_s=0.3)

    assert time.monotonic() - started < 5
    assert outcome.kind is OutcomeKind.RETRYABLE_ERROR
    assert outcome.error_code == TIMEOUT
    assert outcome.status_code is None
    assert "0.3 s" in (outcome.message or "")


async def test_binding_timeout_applies_when_the_call_gives_none(
    adapter: HttpAdapter, backend_url: str
) -> None:
    outcome = await adapter.execute(get(backend_url, "/slow", timeout_ms=300), {"seconds": 10})

    assert outcome.error_code == TIMEOUT
    assert "0.3 s" in (outcome.message or "")


async def test_call_timeout_overrides_the_binding_timeout(adapter: HttpAdapter, backend_url: str) -> None:
    outcome = await adapter.execute(get(backend_url, "/slow", timeout_ms=50), {"seconds": 0.2}, timeout_s=5)

    assert outcome.kind is OutcomeKind.SUCCESS
    assert outcome.body["slow"] is True


async def test_trickling_body_cannot_outlive_the_overall_timeout(
    adapter: HttpAdapter, backend_url: str
) -> None:
    started = time.monotonic()

    outcome = await adapter.execute(get(backend_url, "/trickle"), {"seconds": 10}, timeout_s=0.5)

    assert time.monotonic() - started < 5
    assert outcome.error_code == TIMEOUT


async def test_spent_deadline_ends_the_call_without_sending(adapter: HttpAdapter, backend_url: str) -> None:
    outcome = await adapter.execute(get(backend_url, "/echo/x"), {}, timeout_s=0)

    assert outcome.error_code == TIMEOUT
    assert outcome.kind is OutcomeKind.RETRYABLE_ERROR


async def test_the_adapter_works_after_a_timeout(adapter: HttpAdapter, backend_url: str) -> None:
    await adapter.execute(get(backend_url, "/slow"), {"seconds": 10}, timeout_s=0.2)

    outcome = await adapter.execute(get(backend_url, "/echo/after"), {})

    assert outcome.kind is OutcomeKind.SUCCESS


async def test_refused_connection_is_retryable(adapter: HttpAdapter, refused_url: str) -> None:
    outcome = await adapter.execute(get(refused_url, "/anything"), {})

    assert outcome.kind is OutcomeKind.RETRYABLE_ERROR
    assert outcome.error_code == UNREACHABLE
    assert outcome.status_code is None
    assert "cannot connect to the backend" in (outcome.message or "")


async def test_connection_reset_without_an_answer_is_retryable(
    adapter: HttpAdapter, rude_server: RudeServer
) -> None:
    outcome = await adapter.execute(get(rude_server.url, "/anything"), {})

    assert rude_server.accepted >= 1
    assert outcome.kind is OutcomeKind.RETRYABLE_ERROR
    assert outcome.error_code == UNREACHABLE
    assert "closed before a complete answer" in (outcome.message or "")


async def test_connection_dropped_mid_answer_is_retryable(adapter: HttpAdapter, backend_url: str) -> None:
    outcome = await adapter.execute(get(backend_url, "/truncated"), {})

    assert outcome.kind is OutcomeKind.RETRYABLE_ERROR
    assert outcome.error_code == UNREACHABLE
    assert outcome.status_code is None


async def test_unresolvable_host_is_retryable(adapter: HttpAdapter) -> None:
    outcome = await adapter.execute(get("http://no-such-host.invalid", "/x"), {}, timeout_s=5)

    assert outcome.kind is OutcomeKind.RETRYABLE_ERROR
    assert outcome.error_code == UNREACHABLE
    assert "cannot be resolved" in (outcome.message or "")


async def test_tls_to_a_plain_http_backend_is_a_configuration_error(
    adapter: HttpAdapter, backend_url: str
) -> None:
    tls_url = backend_url.replace("http://", "https://")

    outcome = await adapter.execute(get(tls_url, "/echo/x"), {})

    assert outcome.kind is OutcomeKind.TERMINAL_ERROR
    assert outcome.error_code == MISCONFIGURED
    assert "TLS" in (outcome.message or "")


@pytest.mark.parametrize("base_url", ["http://[::1", "ftp://files.example.test"])
async def test_unusable_base_url_is_a_configuration_error(adapter: HttpAdapter, base_url: str) -> None:
    outcome = await adapter.execute(get(base_url, "/x"), {})

    assert outcome.kind is OutcomeKind.TERMINAL_ERROR
    assert outcome.error_code == MISCONFIGURED


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
async def test_oversized_answer_is_refused(backend_url: str, chunked: bool) -> None:
    async with HttpAdapter(max_response_bytes=10_000) as adapter:
        small = await adapter.execute(get(backend_url, "/big"), {"bytes": 9216, "chunked": chunked})
        big = await adapter.execute(get(backend_url, "/big"), {"bytes": 20480, "chunked": chunked})

    assert small.kind is OutcomeKind.SUCCESS
    assert big.kind is OutcomeKind.TERMINAL_ERROR
    assert big.error_code == MALFORMED
    assert "10000 bytes" in (big.message or "")


async def test_undecodable_content_encoding_is_a_data_error(adapter: HttpAdapter, backend_url: str) -> None:
    outcome = await respond(adapter, backend_url, 200, "not gzip at all", "content-encoding:gzip")

    assert outcome.kind is OutcomeKind.TERMINAL_ERROR
    assert outcome.error_code == MALFORMED


def test_every_adapter_code_is_registered_with_a_matching_status() -> None:
    for code in ADAPTER_ERROR_CODES:
        assert code in REGISTRY, f"{code} is not in calls.errors.REGISTRY"
        status = REGISTRY[code].status.value
        expected = "retryable_error" if code.startswith("R-") else {"terminal_error", "invalid_request"}
        assert status in expected if isinstance(expected, set) else status == expected, code


Got = tuple[AdapterOutcome, str]
"""What a failure scenario produced, and the backend address it must not reveal."""
Scenario = Callable[[HttpAdapter, str, str, "RudeServer"], Awaitable[Got]]


async def _timed_out(adapter: HttpAdapter, url: str, refused: str, rude: RudeServer) -> Got:
    return await adapter.execute(get(url, "/slow"), {"seconds": 10}, timeout_s=0.2), url


async def _spent(adapter: HttpAdapter, url: str, refused: str, rude: RudeServer) -> Got:
    return await adapter.execute(get(url, "/echo/x"), {}, timeout_s=0), url


async def _refused(adapter: HttpAdapter, url: str, refused: str, rude: RudeServer) -> Got:
    return await adapter.execute(get(refused, "/x"), {}), refused


async def _reset(adapter: HttpAdapter, url: str, refused: str, rude: RudeServer) -> Got:
    return await adapter.execute(get(rude.url, "/x"), {}), rude.url


async def _cut(adapter: HttpAdapter, url: str, refused: str, rude: RudeServer) -> Got:
    return await adapter.execute(get(url, "/truncated"), {}), url


async def _unresolvable(adapter: HttpAdapter, url: str, refused: str, rude: RudeServer) -> Got:
    target = "http://no-such-host.invalid"
    return await adapter.execute(get(target, "/x"), {}, timeout_s=5), target


async def _tls(adapter: HttpAdapter, url: str, refused: str, rude: RudeServer) -> Got:
    target = url.replace("http://", "https://")
    return await adapter.execute(get(target, "/echo/x"), {}), target


async def _redirect(adapter: HttpAdapter, url: str, refused: str, rude: RudeServer) -> Got:
    outcome = await respond(adapter, url, 302, "", "location:https://api.example.test:8443/v2")
    return outcome, "https://api.example.test:8443"


async def _too_large(adapter: HttpAdapter, url: str, refused: str, rude: RudeServer) -> Got:
    async with HttpAdapter(max_response_bytes=1_000) as small:
        return await small.execute(get(url, "/big"), {"bytes": 4096}), url


async def _bad_base(adapter: HttpAdapter, url: str, refused: str, rude: RudeServer) -> Got:
    target = "ftp://files.example.test:2121"
    return await adapter.execute(get(target, "/x"), {}), target


@pytest.mark.parametrize(
    "scenario",
    [_timed_out, _spent, _refused, _reset, _cut, _unresolvable, _tls, _redirect, _too_large, _bad_base],
    ids=lambda s: s.__name__.strip("_"),
)
async def test_backend_addresses_stay_out_of_messages_and_go_to_the_log(
    adapter: HttpAdapter,
    backend_url: str,
    refused_url: str,
    rude_server: RudeServer,
    caplog: pytest.LogCaptureFixture,
    scenario: Scenario,
) -> None:
    """A client sees what failed and what to do, never where the backend lives; the operator's log does."""
    with caplog.at_level(logging.INFO, logger="colonnade.adapters"):
        outcome, target = await scenario(adapter, backend_url, refused_url, rude_server)

    assert outcome.kind is not OutcomeKind.SUCCESS
    address = target.split("://", 1)[1]
    host, _, port = address.partition(":")
    message = outcome.message or ""
    assert host not in message and target not in message
    assert not port or port not in message
    logged = " ".join(record.getMessage() for record in caplog.records)
    assert host in logged
