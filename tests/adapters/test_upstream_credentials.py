"""Upstream credentials by mode, end to end: a user's call reaches an HTTP backend and an MCP
server with a token exchanged at a real RFC 8693 authorization server (sub the user, act the
gateway, aud the upstream, checked against the AS's JWKS), cached until expiry; forward mode
forwards only a token issued for that upstream; an expired subject token never reaches one."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from colonnade.adapters.credentials import CredentialRefused, forwarded
from colonnade.calls.approvals.desk import principal_from, snapshot_of
from colonnade.config import Settings
from colonnade.contracts.findings import Severity
from colonnade.contracts.validate import validate_data
from colonnade.governance.agent_admin import AgentRequest
from colonnade.governance.principal import CallerToken, Principal, PrincipalKind
from colonnade.store.audit_repo import AuditFilter, StoredAudit
from tests.support.exchange_rig import (
    BACKEND_AUDIENCE,
    CLIENT_ID,
    MCP_AUDIENCE,
    Rig,
    contract,
    exchange_rig,
    verify,
)

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    with (
        pytest.MonkeyPatch.context() as monkeypatch,
        exchange_rig(tmp_path_factory.mktemp("exchange"), monkeypatch) as running,
    ):
        yield running


def _records(rig: Rig, call_id: str) -> list[StoredAudit]:
    audit = rig.running.gateway.governance.audit
    assert audit is not None
    records = rig.running.run(audit.store.query(AuditFilter(), limit=1000))
    return [record for record in records if record.call_id == call_id]


def test_an_http_backend_sees_the_user_acting_through_the_gateway(rig: Rig) -> None:
    token = rig.token("alice")
    answer = rig.call(token, "acme:crm:whoami")
    assert answer["status"] == "success", answer
    assert answer["output"] == {"sub": "alice", "act": {"sub": CLIENT_ID}, "aud": BACKEND_AUDIENCE}
    claims = rig.hits[-1]["claims"]
    assert claims["scope"] == "crm.read"  # narrowed to what the contract asks, out of alice's scopes
    [record] = _records(rig, answer["call_id"])
    assert record.details["upstream"] == {"mode": "exchange", "subject": "alice"}
    stored = repr(record)
    assert token not in stored and "eyJ" not in stored


def test_with_actor_agent_the_exchange_names_the_calling_agent_as_actor(rig: Rig) -> None:
    admin = rig.running.gateway.governance.agent_admin
    assert admin is not None
    request = AgentRequest(allowed_tools=("acme:*",), agent_id="invoice-bot", tenant="acme")
    rig.running.run(admin.register(Principal.system("test"), request))
    token = rig.agent_token("alice", "invoice-bot")
    by_agent = rig.call(token, "acme:crmagent:whoami")
    assert by_agent["status"] == "success", by_agent
    act = {"sub": "agent:invoice-bot", "act": {"sub": CLIENT_ID}}
    assert by_agent["output"] == {"sub": "alice", "act": act, "aud": BACKEND_AUDIENCE}
    # the same agent on an upstream whose actor is the gateway: the gateway alone acts
    by_gateway = rig.call(token, "acme:crm:whoami")
    assert by_gateway["output"]["act"] == {"sub": CLIENT_ID}
    # a user calling alone has no agent to name: the gateway acts, as with actor: gateway
    assert rig.call(rig.token("alice"), "acme:crmagent:whoami")["output"]["act"] == {"sub": CLIENT_ID}


def test_an_exchanged_token_is_reused_until_it_expires(rig: Rig) -> None:
    token = rig.token("bob")
    before = rig.exchanges()
    for _ in range(5):
        assert rig.call(token, "acme:crm:whoami")["output"]["sub"] == "bob"
    assert rig.exchanges() == before + 1
    other = rig.token("bob")  # another token of the same user is another subject token
    assert rig.call(other, "acme:crm:whoami")["status"] == "success"
    assert rig.exchanges() == before + 2


def test_a_short_lived_subject_token_is_exchanged_again_once_its_cached_token_would_expire(rig: Rig) -> None:
    # the exchanged token never outlives the subject token: within the expiry margin it is not reused
    token = rig.token("carol", ttl_s=20)  # inside the 30 s margin at once
    before = rig.exchanges()
    for _ in range(2):
        assert rig.call(token, "acme:crm:whoami")["status"] == "success"
    assert rig.exchanges() == before + 2


def test_an_mcp_server_gets_an_exchanged_token_for_its_own_audience(rig: Rig) -> None:
    token = rig.token("dave")
    answer = rig.call(token, "acme:faults:authorization")
    assert answer["status"] == "success", answer
    scheme, _, sent = answer["output"]["value"].partition(" ")
    assert scheme == "Bearer" and sent != token
    claims = verify(sent, rig.keys, MCP_AUDIENCE)
    assert (claims["sub"], claims["act"], claims["aud"]) == ("dave", {"sub": CLIENT_ID}, MCP_AUDIENCE)
    [record] = _records(rig, answer["call_id"])
    assert record.details["upstream"] == {"mode": "exchange", "subject": "dave"}


def test_an_expired_subject_token_is_refused_before_any_upstream_call(rig: Rig) -> None:
    token = rig.token("erin", ttl_s=-120)  # expired beyond the gateway's leeway
    hits, exchanges = len(rig.hits), rig.exchanges()
    for tool in ("acme:crm:whoami", "acme:faults:authorization"):
        answer = rig.call(token, tool)
        assert answer["status"] == "terminal_error" and answer["error"]["code"] == "A-AUTH-EXPIRED", answer
    assert len(rig.hits) == hits and rig.exchanges() == exchanges


def test_forward_mode_forwards_only_a_token_issued_for_that_upstream(rig: Rig) -> None:
    for_backend = rig.token("frank", audience=[BACKEND_AUDIENCE])
    answer = rig.call(for_backend, "acme:crmfwd:whoami")
    assert answer["status"] == "success", answer
    assert answer["output"]["sub"] == "frank" and answer["output"]["act"] is None
    [record] = _records(rig, answer["call_id"])
    assert record.details["upstream"] == {"mode": "forward", "subject": "frank"}
    gateway_only = rig.token("frank")
    hits = len(rig.hits)
    refused = rig.call(gateway_only, "acme:crmfwd:whoami")
    assert refused["error"]["code"] == "A-AUTH-UPSTREAM-AUDIENCE", refused
    assert BACKEND_AUDIENCE in refused["error"]["message"] and len(rig.hits) == hits


def test_exchange_mode_without_a_token_exchange_section_is_a_clear_settings_error() -> None:
    server: dict[str, Any] = {
        "name": "faults",
        "transport": "http",
        "url": "http://127.0.0.1:1/mcp",
        "auth": {"mode": "exchange", "audience": MCP_AUDIENCE},
    }
    with pytest.raises(ValidationError, match="needs a `token_exchange:` section"):
        Settings(servers=[server])
    server["auth"] = {"mode": "exchnge", "audience": MCP_AUDIENCE}
    with pytest.raises(ValidationError, match=r"auth\.mode must be static, forward, exchange or user_oauth"):
        Settings(servers=[server])


def test_no_token_reaches_the_gateway_database(rig: Rig) -> None:
    token = rig.token("gina")
    answer = rig.call(token, "acme:crm:whoami")
    assert _records(rig, answer["call_id"])  # the record is written (and committed) by now
    sent = rig.hits[-1]["claims"]["jti"]
    database = (Path(rig.running.gateway.settings.data_dir) / "colonnade.db").read_bytes()
    assert token.encode() not in database and sent.encode() not in database


def test_a_token_that_expired_after_the_edge_checked_it_is_not_forwarded() -> None:
    # a call can outlive its token (parked, queued); the credential is checked again when sent
    expired = CallerToken("header.payload.sig", "iss", "hana", frozenset({BACKEND_AUDIENCE}), time.time() - 1)
    with pytest.raises(CredentialRefused) as refused:
        forwarded(expired, BACKEND_AUDIENCE)
    assert refused.value.code == "A-AUTH-UPSTREAM-SUBJECT" and "expired" in refused.value.message
    with pytest.raises(CredentialRefused) as missing:
        forwarded(None, BACKEND_AUDIENCE)
    assert missing.value.code == "A-AUTH-UPSTREAM-SUBJECT"
    assert "header.payload.sig" not in repr(expired)


@pytest.mark.parametrize(
    ("auth", "path", "words"),
    [
        ({"mode": "forward"}, "/backend/auth/audience", "missing the required field 'audience'"),
        (
            {"mode": "exchnge", "audience": "x"},
            "/backend/auth/mode",
            "expected one of: static, forward, exchange",
        ),
        ({"mode": "exchange", "audience": "x", "ttl": 1}, "/backend/auth/ttl", "unknown field 'ttl'"),
        ("token", "/backend/auth", "must be a mapping"),
    ],
)
def test_a_contract_with_a_bad_credential_mode_gets_one_finding_that_names_it(
    auth: object, path: str, words: str
) -> None:
    document = contract("crm", "http://127.0.0.1:1", auth)  # type: ignore[arg-type]
    errors = [finding for finding in validate_data(document) if finding.severity is Severity.ERROR]
    assert [(finding.path, words in finding.message) for finding in errors] == [(path, True)], errors


def test_a_parked_call_stores_its_requester_without_the_caller_token() -> None:
    caller = CallerToken("header.payload.sig", "iss", "ivan", frozenset({"aud"}), time.time() + 60)
    principal = Principal(PrincipalKind.USER, "ivan", tenant="acme", caller_token=caller)
    snapshot = snapshot_of(principal)
    assert "header.payload.sig" not in json.dumps(snapshot)
    assert principal_from(snapshot).caller_token is None
