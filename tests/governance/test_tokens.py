"""Verifying access tokens: real keys, a real JWKS URL on loopback; every forgery gets its code."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Iterator

import pytest
from joserfc import jwt
from joserfc.jwk import RSAKey

from colonnade.governance.identity.failures import AuthFailure
from colonnade.governance.identity.issuer_keys import IssuerKeys, jwks_url_problem
from colonnade.governance.identity.tokens import TokenVerifier, TrustedIssuer, VerifiedToken
from tests.support.issuer import Issuer, running_issuer

AUDIENCE = "http://127.0.0.1:8765/mcp"
CLAIMS = {"sub": "alice", "tenant": "acme", "persona": "admin"}


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    with running_issuer() as running:
        yield running


def _verifier(issuer: Issuer, **keys_options: float) -> TokenVerifier:
    keys = IssuerKeys(jwks_url=issuer.jwks_url, **keys_options)  # type: ignore[arg-type]
    trusted = TrustedIssuer(issuer.url, keys, frozenset({"RS256", "ES256"}), AUDIENCE)
    return TokenVerifier([trusted], leeway_s=5)


def _code(outcome: VerifiedToken | AuthFailure) -> str:
    return outcome.code if isinstance(outcome, AuthFailure) else "ok"


def _part(value: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()


def _unsigned(claims: dict[str, object]) -> str:
    return f"{_part({'alg': 'none', 'typ': 'JWT'})}.{_part(claims)}."


def _hmac_signed(header: dict[str, object], claims: dict[str, object], secret: bytes) -> str:
    """A token MACed with `secret` by hand (joserfc itself refuses to build this forgery)."""
    signing_input = f"{_part(header)}.{_part(claims)}"
    mac = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{base64.urlsafe_b64encode(mac).rstrip(b'=').decode()}"


async def test_a_good_token_verifies_with_rs256_and_es256(issuer: Issuer) -> None:
    verifier = _verifier(issuer)
    for alg in ("RS256", "ES256"):
        outcome = await verifier.verify(issuer.mint(CLAIMS, audience=AUDIENCE, alg=alg))
        assert isinstance(outcome, VerifiedToken), outcome
        assert outcome.claims["sub"] == "alice" and outcome.issuer == issuer.url


async def test_forgeries_are_refused_each_with_its_code(issuer: Issuer) -> None:
    verifier = _verifier(issuer)
    now = time.time()
    stranger = RSAKey.generate_key(2048, auto_kid=True)
    good = issuer.mint(CLAIMS, audience=AUDIENCE)
    head, _, signature = good.split(".")
    tampered_body = (
        base64.urlsafe_b64encode(
            json.dumps({**jwt.decode(good, issuer.signing).claims, "tenant": "globex"}).encode()
        )
        .rstrip(b"=")
        .decode()
    )
    public_pem = issuer.signing.as_pem(private=False)
    cases = {
        "A-AUTH-SIGNATURE": [
            issuer.mint(CLAIMS, audience=AUDIENCE, key=stranger, header={"kid": issuer.signing.kid}),
            f"{head}.{tampered_body}.{signature}",
        ],
        "A-AUTH-ALGORITHM": [
            _unsigned({"iss": issuer.url, "sub": "alice", "aud": AUDIENCE, "exp": now + 60}),
            # the issuer's public key used as an HMAC secret (the classic algorithm confusion)
            _hmac_signed(
                {"alg": "HS256", "kid": issuer.signing.kid},
                {"iss": issuer.url, "sub": "alice", "aud": AUDIENCE, "exp": int(now) + 60},
                public_pem,
            ),
        ],
        "A-AUTH-SIGNING-KEY": [issuer.mint(CLAIMS, audience=AUDIENCE, key=stranger)],
        "A-AUTH-AUDIENCE": [issuer.mint(CLAIMS, audience="http://127.0.0.1:9999/mcp")],
        "A-AUTH-ISSUER": [issuer.mint({**CLAIMS, "iss": "https://evil.example"}, audience=AUDIENCE)],
        "A-AUTH-EXPIRED": [issuer.mint(CLAIMS, audience=AUDIENCE, issued_at=now - 900, ttl_s=300)],
        "A-AUTH-NOT-YET-VALID": [issuer.mint({**CLAIMS, "nbf": int(now) + 600}, audience=AUDIENCE)],
        "A-AUTH-CLAIMS": [
            issuer.mint({"tenant": "acme"}, audience=AUDIENCE),  # no sub
            issuer.mint({**CLAIMS, "exp": None}, audience=AUDIENCE),
        ],
        "A-AUTH-MALFORMED": ["not.a.jwt", "eyJhbGciOiJSUzI1NiJ9.bm90IGpzb24.c2ln"],
    }
    for code, tokens in cases.items():
        for token in tokens:
            assert _code(await verifier.verify(token)) == code, (code, token[:40])


async def test_a_token_without_an_audience_is_refused(issuer: Issuer) -> None:
    assert _code(await _verifier(issuer).verify(issuer.mint(CLAIMS, audience=None))) == "A-AUTH-CLAIMS"


async def test_keys_are_cached_and_a_rotated_key_is_fetched_once(issuer: Issuer) -> None:
    verifier = _verifier(issuer, refetch_min_s=0.0)
    before = issuer.jwks_requests
    for _ in range(3):
        assert _code(await verifier.verify(issuer.mint(CLAIMS, audience=AUDIENCE))) == "ok"
    assert issuer.jwks_requests == before + 1
    issuer.rotate()
    assert _code(await verifier.verify(issuer.mint(CLAIMS, audience=AUDIENCE))) == "ok"
    assert issuer.jwks_requests == before + 2


async def test_unknown_key_ids_do_not_flood_the_issuer(issuer: Issuer) -> None:
    verifier = _verifier(issuer, refetch_min_s=60.0)
    stranger = RSAKey.generate_key(2048, auto_kid=True)
    before = issuer.jwks_requests
    for _ in range(5):
        forged = issuer.mint(CLAIMS, audience=AUDIENCE, key=stranger)
        assert _code(await verifier.verify(forged)) == "A-AUTH-SIGNING-KEY"
    assert issuer.jwks_requests - before == 1  # the first fetch; no re-fetch within refetch_min_s


async def test_an_unreachable_issuer_is_unavailable_until_its_keys_were_fetched(issuer: Issuer) -> None:
    issuer.available = False
    try:
        fresh = _verifier(issuer)
        outcome = await fresh.verify(issuer.mint(CLAIMS, audience=AUDIENCE))
        assert isinstance(outcome, AuthFailure) and outcome.code == "A-AUTH-JWKS-UNAVAILABLE"
        assert outcome.status == 503
    finally:
        issuer.available = True


async def test_a_remembered_token_still_expires(issuer: Issuer) -> None:
    clock = [time.time()]
    keys = IssuerKeys(jwks_url=issuer.jwks_url)
    verifier = TokenVerifier(
        [TrustedIssuer(issuer.url, keys, frozenset({"RS256"}), AUDIENCE)], leeway_s=0, clock=lambda: clock[0]
    )
    token = issuer.mint(CLAIMS, audience=AUDIENCE, ttl_s=30)
    assert _code(await verifier.verify(token)) == "ok"
    clock[0] += 31
    assert _code(await verifier.verify(token)) == "A-AUTH-EXPIRED"


def test_jwks_urls_must_be_https_or_loopback() -> None:
    assert jwks_url_problem("https://idp.example.com/jwks") is None
    assert jwks_url_problem("http://127.0.0.1:9000/jwks") is None
    assert jwks_url_problem("http://localhost:9000/jwks") is None
    assert jwks_url_problem("http://idp.example.com/jwks") is not None
    assert jwks_url_problem("file:///etc/keys.json") is not None
