"""No argument values and no secret-looking strings in log lines, whatever path they take."""

from __future__ import annotations

import logging

import pytest

from colonnade.catalog.catalog import Catalog
from colonnade.observability.redaction import REDACTED, InputFingerprint, argument_names, redact_event, scrub
from tests.observability.conftest import SECRET, Answer, Explode, LogCapture, observed, request

JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)


async def test_argument_values_never_reach_the_log(logs: LogCapture, catalog: Catalog) -> None:
    gateway = observed(catalog, Answer())
    await gateway.service.call(request(input={"customer_id": SECRET, "note": "Jane Roe, 12 Main St"}))
    (line,) = logs.events("call")
    assert line["args"] == ["customer_id", "note"]
    assert SECRET not in logs.text and "sk_live" not in logs.text
    assert "Jane Roe" not in logs.text


async def test_a_secret_used_as_an_argument_name_is_redacted(logs: LogCapture, catalog: Catalog) -> None:
    gateway = observed(catalog, Answer())
    await gateway.service.call(request(input={SECRET: 1, "customer_id": "C-1"}, fn=f"Bearer {SECRET}"))
    (line,) = logs.events("call")
    assert line["args"] == ["customer_id", REDACTED]
    assert line["fn"] == REDACTED
    assert SECRET not in logs.text


async def test_an_exception_quoting_a_secret_does_not_leak_it(logs: LogCapture, catalog: Catalog) -> None:
    gateway = observed(catalog, Explode())
    await gateway.service.call(request(input={"customer_id": SECRET}))
    assert logs.events("call")[0]["code"] == "S-TOOL-INTERNAL"
    assert SECRET not in logs.text


def test_library_records_are_scrubbed_in_the_message_and_in_extra(logs: LogCapture) -> None:
    log = logging.getLogger("some.library")
    log.warning("retrying http://admin:hunter2x@db.internal:5432/app with key %s", SECRET)
    log.warning("token refresh", extra={"authorization": "Basic dXNlcjpwYXNz", "detail": {"jwt": JWT}})
    first, second = logs.lines()
    assert "hunter2x" not in first["event"] and SECRET not in first["event"]
    assert "db.internal:5432/app" in first["event"]
    assert second["authorization"] == REDACTED
    assert second["detail"] == {"jwt": REDACTED}


def test_exception_tracebacks_are_scrubbed(logs: LogCapture) -> None:
    try:
        raise ValueError(f"bad key {SECRET}")
    except ValueError:
        logging.getLogger("colonnade.x").exception("failed")
    (line,) = logs.lines()
    assert "ValueError" in line["exception"] and SECRET not in line["exception"]


@pytest.mark.parametrize(
    "text",
    [
        SECRET,
        "rk_test_51H8abcdefGHIJKLmnop",
        "AKIAIOSFODNN7EXAMPLE",
        "ghp_" + "a1B2" * 9,
        "xoxb-1234567890-abcdefghij",
        "AIzaSyA-1234567890abcdefghijklmnopqrstu",
        "sk-proj-abcdefghijklmnop1234",
        JWT,
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----",
        "jane.roe@corp.io",
        "4242 4242 4242 4242",
    ],
)
def test_secret_shapes_are_redacted_inside_text(text: str) -> None:
    scrubbed = scrub(f"before {text} after")
    assert text not in scrubbed
    assert scrubbed.startswith("before ") and scrubbed.endswith(" after")


@pytest.mark.parametrize(
    "text",
    [
        "acme:crm:get_customer",
        "0b6f0a5c-1111-4222-8333-444455556666",
        "6330b7a54d7f457c8efd0988477ae77a",
        "deadline 1714760000000 ms",
        "4242 4242 4242 4241",  # fails the Luhn check: not a card
        "GET /customers?limit=10 returned 200",
        "I-REQ-UNKNOWN-TOOL",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert scrub(text) == text


def test_fields_named_like_secrets_lose_their_value_and_nested_values_are_scrubbed() -> None:
    event = {
        "event": "x",
        "password": "open sesame",
        "api_key": "k",
        "x-api-key": "k",
        "access_token": "t",
        "tokens": 3,
        "query_tokens": ["crm", "customer"],
        "nested": {"set-cookie": "a=b", "list": [SECRET, ("ok", SECRET)]},
    }
    out = redact_event(None, "info", event)
    assert out["password"] == out["api_key"] == out["x-api-key"] == out["access_token"] == REDACTED
    assert out["tokens"] == 3 and out["query_tokens"] == ["crm", "customer"]
    assert out["nested"] == {"set-cookie": REDACTED, "list": [REDACTED, ["ok", REDACTED]]}


def test_argument_names_are_sorted_and_bounded() -> None:
    assert argument_names({"b": 1, "a": 2}) == ["a", "b"]
    many = argument_names({f"arg{i:03}": i for i in range(40)})
    assert len(many) == 33 and many[-1] == "(+8 more)"
    assert argument_names({"n" * 500: 1}) == ["n" * 64]


def test_the_input_fingerprint_matches_equal_inputs_and_hides_values() -> None:
    fingerprint = InputFingerprint(key=b"k" * 32)
    a = fingerprint({"customer_id": "C-1", "limit": 5})
    assert a == fingerprint({"limit": 5, "customer_id": "C-1"})
    assert a != fingerprint({"customer_id": "C-2", "limit": 5})
    assert a != InputFingerprint(key=b"j" * 32)({"customer_id": "C-1", "limit": 5})
    assert len(a) == 16 and "C-1" not in a
    assert len(fingerprint({1: "mixed", "key": "types"})) == 16  # unsortable keys still hash
