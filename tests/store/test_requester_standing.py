"""A requester's standing read again from the database (SQLite and PostgreSQL): what a resumed
approved call checks before it runs as the principal that asked."""

from __future__ import annotations

from dataclasses import replace

from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.governance.agent_admin import AgentAdmin, AgentRequest
from colonnade.governance.identity.api_keys import ApiKeys
from colonnade.governance.identity.failures import AuthFailure
from colonnade.governance.identity.standing import Standing
from colonnade.governance.key_admin import KeyAdmin, KeyRequest
from colonnade.governance.principal import Principal, PrincipalKind
from colonnade.store.agents_repo import AgentStore
from colonnade.store.api_keys_repo import ApiKeyStore

OPERATOR = Principal.system("test")


def _code(outcome: Principal | AuthFailure) -> str:
    return outcome.code if isinstance(outcome, AuthFailure) else "ok"


async def test_a_key_revoked_expired_or_unknown_since_it_asked_is_refused(engine: AsyncEngine) -> None:
    store = ApiKeyStore(engine)
    admin = KeyAdmin(store, overlap_s=0)
    keys = ApiKeys(store, cache_s=300.0)  # a long cache: the standing check must not read it
    standing = Standing(store, AgentStore(engine))
    revoked = await admin.create(OPERATOR, KeyRequest(owner="alice", persona="admin", tenant="acme"))
    rotated = await admin.create(OPERATOR, KeyRequest(owner="carol", persona="admin", tenant="acme"))
    asked = {}
    for issued in (revoked, rotated):
        principal = await keys.authenticate(issued.token)
        assert isinstance(principal, Principal)
        asked[issued.record.id] = principal
        assert await standing.recheck(principal) == principal
    await admin.revoke(OPERATOR, revoked.record.id)
    await admin.rotate(OPERATOR, rotated.record.id)  # no overlap: the old key expires at once
    assert _code(await standing.recheck(asked[revoked.record.id])) == "A-AUTH-REVOKED"
    assert _code(await standing.recheck(asked[rotated.record.id])) == "A-AUTH-EXPIRED"
    unknown = replace(asked[revoked.record.id], credential="api_key:000000000000")
    assert _code(await standing.recheck(unknown)) == "A-AUTH-API-KEY"
    someone_else = replace(asked[rotated.record.id], id="mallory")
    assert _code(await standing.recheck(someone_else)) == "A-AUTH-API-KEY"


async def test_an_agent_revoked_since_it_asked_is_refused(engine: AsyncEngine) -> None:
    agents = AgentStore(engine)
    admin = AgentAdmin(agents)
    standing = Standing(ApiKeyStore(engine), agents)
    await admin.register(OPERATOR, AgentRequest(("acme:crm:get_customer",), "bot-1", "acme"))
    asked = Principal(
        PrincipalKind.AGENT, "bot-1", tenant="acme", persona="agent", allowed_tools=("acme:crm:*",)
    )
    now = await standing.recheck(asked)
    assert isinstance(now, Principal) and now.allowed_tools == ("acme:crm:get_customer",)  # as it stands
    assert _code(await standing.recheck(replace(asked, tenant="globex"))) == "A-AUTH-AGENT"
    assert _code(await standing.recheck(replace(asked, id="bot-2"))) == "A-AUTH-AGENT"
    await admin.revoke(OPERATOR, "bot-1")
    assert _code(await standing.recheck(asked)) == "A-AUTH-REVOKED"


async def test_a_user_of_an_issuer_keeps_its_identity(engine: AsyncEngine) -> None:
    standing = Standing(ApiKeyStore(engine), AgentStore(engine))
    user = Principal(
        PrincipalKind.USER, "alice", tenant="acme", persona="admin", credential="jwt:https://idp"
    )
    assert await standing.recheck(user) == user
