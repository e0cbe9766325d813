"""API keys over REST on the governed gateway: shown once, hashed at rest, scoped to a tenant,
rotated with an overlap, revoked at once; a key of another tenant reaches nothing of this one."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text

from colonnade.governance.identity.api_keys import new_key
from colonnade.governance.key_admin import KeyRequest
from colonnade.governance.principal import Principal
from colonnade.governance.refusals import InvalidRequest
from colonnade.store.api_keys_repo import ApiKeyRecord, ApiKeyStore
from colonnade.store.audit_repo import AuditFilter
from tests.support.governed import Governed

OPERATOR = Principal.system("test-operator")


def _create(governed: Governed, token: str, **body: object) -> dict[str, object]:
    with governed.rest(token) as client:
        response = client.post("/v1/keys", json=body)
    assert response.status_code == 201, response.text
    return dict(response.json())


def _table(governed: Governed) -> str:
    engine = governed.running.gateway.engine
    assert engine is not None

    async def dump() -> str:
        async with engine.connect() as conn:
            return str((await conn.execute(text("SELECT * FROM api_keys"))).all())

    return governed.running.run(dump())


def test_a_key_is_shown_once_and_stored_only_as_a_hash(governed: Governed) -> None:
    admin = governed.token("admin")
    made = _create(governed, admin, owner="ci-bot", persona="developer", team="team-a", label="ci")
    key, token = made["key"], str(made["token"])
    assert isinstance(key, dict) and "secret_hash" not in key and token.startswith("col_")
    secret = token.split("_", 2)[2]
    table = _table(governed)
    assert secret not in table and token not in table
    assert hashlib.sha256(secret.encode()).hexdigest() in table
    with governed.rest(admin) as client:
        listed = client.get("/v1/keys").json()["keys"]
    assert key["id"] in {item["id"] for item in listed} and token not in str(listed)
    assert governed.call(token, "acme:items:read_item", item_id="I-1")[1]["status"] == "success"
    assert governed.call(token, "acme:items:write_item", item_id="I-1", value="x")[1]["error"]["code"] == (
        "A-AUTH-FORBIDDEN"  # a developer key writes only to non-production APIs
    )


def test_a_key_of_another_tenant_reaches_nothing_here(governed: Governed) -> None:
    gateway = governed.running.gateway
    assert gateway.governance.key_admin is not None
    issued = governed.running.run(
        gateway.governance.key_admin.create(
            OPERATOR, KeyRequest(owner="g-bot", persona="admin", tenant="globex")
        )
    )
    hits = len(governed.backend_hits())
    for tool in ("acme:items:read_item", "acme__items__read_item", "acme:lab:write_item"):
        result = governed.call(issued.token, tool, item_id="I-1", value="x")[1]
        assert result["error"]["code"] == "I-REQ-UNKNOWN-TOOL"
    assert len(governed.backend_hits()) == hits
    assert governed.call(issued.token, "globex:items:read_item", item_id="I-1")[1]["status"] == "success"


def test_rotation_keeps_the_old_key_for_the_overlap_and_revocation_is_immediate(governed: Governed) -> None:
    admin = governed.token("admin")
    old = str(_create(governed, admin, owner="rotating-bot", persona="admin", tenant="acme")["token"])
    old_id = old.split("_")[1]
    assert governed.call(old, "acme:items:read_item", item_id="I-1")[1]["status"] == "success"
    with governed.rest(admin) as client:
        rotated = client.post(f"/v1/keys/{old_id}/rotate")
    assert rotated.status_code == 201
    new = rotated.json()["token"]
    for token in (old, new):
        assert governed.call(token, "acme:items:read_item", item_id="I-1")[1]["status"] == "success"
    effects = len(governed.effects())
    with governed.rest(admin) as client:
        assert client.delete(f"/v1/keys/{old_id}").status_code == 200
    status, refused = governed.call(old, "acme:items:write_item", item_id="I-1", value="after revocation")
    assert status == 401 and refused["error"]["code"] == "A-AUTH-REVOKED"
    assert len(governed.effects()) == effects
    audit = governed.running.gateway.governance.audit
    assert audit is not None
    kinds = [r.kind for r in governed.running.run(audit.store.query(AuditFilter(tenant="acme"), limit=1000))]
    assert {"key.create", "key.rotate", "key.revoke"} <= set(kinds)
    failures = governed.running.run(audit.store.query(AuditFilter(kind="auth.failure"), limit=1000))
    assert any(r.code == "A-AUTH-REVOKED" and r.details.get("key_id") == old_id for r in failures)


def test_an_expired_key_is_refused(governed: Governed) -> None:
    engine = governed.running.gateway.engine
    assert engine is not None
    made = new_key()
    past = datetime.now(UTC) - timedelta(minutes=1)
    record = ApiKeyRecord(
        made.key_id, made.secret_hash, "old-bot", "acme", "admin", None, ("colonnade:catalog:read",),
        None, past - timedelta(days=1), past, None, None, None,
    )  # fmt: skip
    governed.running.run(ApiKeyStore(engine).add(record))
    status, result = governed.call(made.token, "acme:items:read_item", item_id="I-1")
    assert status == 401 and result["error"]["code"] == "A-AUTH-EXPIRED"


def test_keys_never_grant_more_than_their_maker_holds(governed: Governed) -> None:
    security = governed.token("security")
    with governed.rest(security) as client:
        beyond = client.post(
            "/v1/keys", json={"owner": "x", "persona": "admin", "scopes": ["colonnade:catalog:write"]}
        )
        assert beyond.status_code == 403 and beyond.json()["error"]["code"] == "A-AUTH-FORBIDDEN"
        other_tenant = client.post("/v1/keys", json={"owner": "x", "persona": "consumer", "tenant": "globex"})
        assert other_tenant.status_code == 403
        agent = client.post("/v1/keys", json={"owner": "x", "persona": "agent"})
        assert agent.status_code == 400 and agent.json()["error"]["code"] == "I-REQ-GOVERNANCE"
        narrowed = client.post("/v1/keys", json={"owner": "x", "persona": "admin"}).json()["key"]
        assert "colonnade:catalog:write" not in narrowed["scopes"]
    with governed.rest(governed.token("consumer")) as client:
        response = client.post("/v1/keys", json={"owner": "x", "persona": "consumer"})
        assert response.status_code == 403 and response.json()["error"]["code"] == "A-AUTH-SCOPE"


def test_a_key_owner_is_a_bare_id_never_a_second_name(governed: Governed) -> None:
    """`user:alice` as an owner would act as `user:user:alice`, a second identity of alice."""
    key_admin = governed.running.gateway.governance.key_admin
    assert key_admin is not None
    for owner in ("user:alice", "agent:bot"):
        with pytest.raises(InvalidRequest, match="bare user id"):
            governed.running.run(key_admin.create(OPERATOR, KeyRequest(owner=owner, persona="admin")))
