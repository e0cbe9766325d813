"""UAC012's detectors: what counts as a secret or real personal data in an example, and what does not."""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from colonnade.contracts.secrets import example_domain, find_secrets, luhn_valid


def _b64(data: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


JWT = f"{_b64({'alg': 'HS256', 'typ': 'JWT'})}.{_b64({'sub': 'u-1', 'iat': 1})}.c2lnbmF0dXJlLWJ5dGVz"

FOUND = [
    ("id AKIAIOSFODNN7EXAMPLE here", "AWS", "AKIAIOSFODNN7EXAMPLE"),
    ("token ghp_" + "a1B2c3D4" * 5, "GitHub", "ghp_" + "a1B2c3D4" * 5),
    (
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
        "GitHub",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
    ),
    ("xoxb-1234567890-abcdefghijkl", "Slack", "xoxb-1234567890-abcdefghijkl"),
    ("key=sk_live_4eC39HqLyjWDarjtT1zdp7dc", "Stripe", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    ("rk_live_4eC39HqLyjWDarjtT1zdp7dc", "Stripe", "rk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    ("AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", "Google", "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"),
    ("OPENAI_API_KEY=sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t", "OpenAI", "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t"),
    ("Authorization: Bearer abc123def456ghi789jkl012", "bearer", "Bearer abc123def456ghi789jkl012"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEow", "PEM", "-----BEGIN RSA PRIVATE KEY-----"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----", "PEM", "-----BEGIN OPENSSH PRIVATE KEY-----"),
    ("-----BEGIN PRIVATE KEY-----", "PEM", "-----BEGIN PRIVATE KEY-----"),
    (f"Bearer {JWT}", "JSON Web Token", JWT),
    (
        "dsn postgres://admin:s3cr3t@db.internal:5432/app",
        "password in a URL",
        "postgres://admin:s3cr3t@db.internal:5432",
    ),
    ("card 4111 1111 1111 1111.", "card", "4111 1111 1111 1111"),
    ("4111-1111-1111-1111", "card", "4111-1111-1111-1111"),
    ("4111111111111111", "card", "4111111111111111"),
    ("amex 3782 822463 10005", "card", "3782 822463 10005"),
    ("5555555555554444", "card", "5555555555554444"),
    ("reach jane.doe@gmail.com today", "e-mail", "jane.doe@gmail.com"),
    ("x@acme.co.uk", "e-mail", "x@acme.co.uk"),
]


@pytest.mark.parametrize(
    ("text", "kind", "matched"), FOUND, ids=[f[1] + "-" + str(i) for i, f in enumerate(FOUND)]
)
def test_detects(text: str, kind: str, matched: str) -> None:
    found = find_secrets(text)
    assert [(m.text, kind in m.kind) for m in found] == [(matched, True)]
    assert matched not in found[0].redacted or len(matched) <= 2


NOT_FOUND = [
    "write to a@example.com, b@mail.example.net or c@example.org",
    "d@foo.example, e@x.test, f@y.invalid, g@localhost, h@app.localhost",
    "4111 1111 1111 1112",  # fails Luhn
    "created_at_ms 1717171717171",  # 13 digits, not an issuer range
    "call +1 555 010 9999",
    "id 123e4567-e89b-12d3-a456-426614174000",
    "pi 3.14159265358979323846",
    "order ORD4111111111111111X",  # glued to letters: an identifier, not a card
    "Authorization: Bearer <token>",
    "Bearer abcdefghijklmnopqrstuvwxyz",  # no digits: prose, not a token
    "https://user:${DB_PASSWORD}@db.example.com and https://user:***@host.example.com",
    "file.name.txt and version.1.2",
    "sk-my-example and task-1234567890abcdefghijk",
    "akiaiosfodnn7example",
    "",
]


@pytest.mark.parametrize("text", NOT_FOUND)
def test_ignores(text: str) -> None:
    assert find_secrets(text) == []


def test_a_url_password_is_not_also_an_email() -> None:
    assert [m.kind for m in find_secrets("https://bob:hunter22@api.acme.io/v1")] == ["a password in a URL"]


def test_several_matches_in_order() -> None:
    found = find_secrets("mail bob@acme.io, card 5555555555554444, key AKIAIOSFODNN7EXAMPLE")
    assert [m.text for m in found] == ["bob@acme.io", "5555555555554444", "AKIAIOSFODNN7EXAMPLE"]


def test_luhn() -> None:
    assert luhn_valid("4111111111111111")
    assert luhn_valid("378282246310005")
    assert not luhn_valid("4111111111111112")


@pytest.mark.parametrize(
    ("domain", "reserved"),
    [
        ("example.com", True),
        ("EXAMPLE.ORG", True),
        ("a.b.example.net", True),
        ("shop.test", True),
        ("example.com.evil.io", False),
        ("myexample.com", False),
        ("gmail.com", False),
    ],
)
def test_example_domains(domain: str, reserved: bool) -> None:
    assert example_domain(domain) is reserved


def _luhn_complete(prefix: str) -> str:
    return next(prefix + d for d in "0123456789" if luhn_valid(prefix + d))


@given(st.text(alphabet="0123456789", min_size=14, max_size=14), st.sampled_from([" ", "-", ""]))
def test_any_visa_like_number_is_found(body: str, separator: str) -> None:
    number = _luhn_complete("4" + body)
    grouped = separator.join(number[i : i + 4] for i in range(0, 16, 4))
    assert [m.text for m in find_secrets(f"pay with {grouped} now")] == [grouped]


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz ,.", max_size=200))
def test_plain_prose_is_never_flagged(text: str) -> None:
    assert find_secrets(text) == []
