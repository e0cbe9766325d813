"""A key, agent or subscription changed through one replica is so on the others within a second.

The replicas' polls and key caches wait five minutes, so a change that arrives within the second
came over the fan-out; each test also checks that the receiving replicas counted a change.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from colonnade.governance.identity.api_keys import parse_key
from tests.shared_state.replicas import admin_key, replica_settings, replicas, within
from tests.support.fault_contract import fault_contract
from tests.support.machine_load import patient


def _bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


async def test_a_key_revoked_through_one_replica_is_refused_by_the_others_within_a_second(
    tmp_path: Path, replica_database: str, redis_url: str, redis_prefix: str
) -> None:
    settings = [replica_settings(tmp_path, replica_database, redis_url, redis_prefix, name) for name in "abc"]
    with replicas(settings) as (a, b, c):
        admin = admin_key(a)
        victim = admin_key(a, owner="victim")
        key_id = parse_key(victim)[0]  # type: ignore[index]
        for other in (b, c):  # each replica has checked the key and trusts it for five minutes
            assert other.client.get("/v1/tools", headers=_bearer(victim)).status_code == 200
        received = {r.gateway.shared.replica_id: r.gateway.shared.fanout.received for r in (b, c)}

        revoked = a.client.delete(f"/v1/keys/{key_id}", headers=_bearer(admin))
        assert revoked.status_code == 200, revoked.text

        def refused_everywhere() -> bool:
            return all(r.client.get("/v1/tools", headers=_bearer(victim)).status_code == 401 for r in (b, c))

        took = within(patient(1.0), refused_everywhere)
        assert took is not None, "the revocation did not reach the other replicas within 1 s"
        answer = b.client.get("/v1/tools", headers=_bearer(victim)).json()
        assert answer["error"]["code"] == "A-AUTH-REVOKED"
        for other in (b, c):
            assert other.gateway.shared.fanout.received > received[other.gateway.shared.replica_id]
        assert a.client.get("/v1/tools", headers=_bearer(victim)).status_code == 401
        status = c.client.get("/v1/status", headers=_bearer(admin)).json()["shared_state"]
        assert status["backend"] == "redis" and status["degraded"] is False


async def test_an_agent_registered_and_revoked_on_one_replica_is_known_so_on_the_others(
    tmp_path: Path, replica_database: str, redis_url: str, redis_prefix: str
) -> None:
    settings = [replica_settings(tmp_path, replica_database, redis_url, redis_prefix, n) for n in "ab"]
    with replicas(settings) as (a, b):
        admin = admin_key(a)
        book = b.gateway.governance.agents
        registered = a.client.post(
            "/v1/agents",
            headers=_bearer(admin),
            json={"agent_id": "courier", "tenant": "acme", "allowed_tools": ["acme:*"]},
        )
        assert registered.status_code in (200, 201), registered.text
        assert within(patient(1.0), lambda: book.get("courier") is not None) is not None

        revoked = a.client.delete("/v1/agents/courier", headers=_bearer(admin))
        assert revoked.status_code == 200, revoked.text

        def revoked_there() -> bool:
            agent = book.get("courier")
            return agent is not None and agent.revoked_at is not None

        assert within(patient(1.0), revoked_there) is not None, "B still takes the agent's tokens"


async def test_a_subscription_made_and_ended_on_one_replica_is_so_on_the_others(
    tmp_path: Path, replica_database: str, redis_url: str, redis_prefix: str
) -> None:
    contract = tmp_path / "faults.yaml"
    contract.write_text(yaml.safe_dump(fault_contract("http://127.0.0.1:9")), encoding="utf-8")
    settings = [
        replica_settings(tmp_path, replica_database, redis_url, redis_prefix, n, contracts=[contract])
        for n in "ab"
    ]
    with replicas(settings) as (a, b):
        carol = _bearer(admin_key(a, owner="carol", persona="consumer", tenant="chaos"))
        book = b.gateway.governance.subscription_book
        made = a.client.post("/v1/subscriptions", headers=carol, json={"api": "chaos:faults"})
        assert made.status_code == 201, made.text
        subscription = made.json()["subscription"]["id"]
        active = lambda: book.active("user:carol", "chaos", "faults")  # noqa: E731
        assert within(patient(1.0), active) is not None, "B does not let carol call yet"

        ended = a.client.delete(f"/v1/subscriptions/{subscription}", headers=carol)
        assert ended.status_code == 200, ended.text
        assert within(patient(1.0), lambda: not active()) is not None, "B still lets carol call"
