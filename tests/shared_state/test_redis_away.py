"""Redis stopped under the replicas: the polls still carry changes, nothing answers 5xx, the status
says degraded; Redis back: the replicas resync (a change made meanwhile applies without its poll)."""

from __future__ import annotations

from pathlib import Path

from colonnade.governance.identity.api_keys import parse_key
from tests.shared_state.replicas import LONG_POLL_S, admin_key, replica_settings, replicas, within
from tests.support.machine_load import patient
from tests.support.page_login import log_in, page_client
from tests.support.redis_server import OwnRedis


def _bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


async def test_without_redis_the_poll_carries_changes_and_after_it_the_replicas_resync(
    tmp_path: Path, replica_database: str, own_redis: OwnRedis, redis_prefix: str
) -> None:
    settings = [
        replica_settings(tmp_path, replica_database, own_redis.url, redis_prefix, n, catalog_poll_s=0.5)
        for n in "ab"
    ]  # agents are re-read every 0.5 s; a checked key is trusted for five minutes
    with replicas(settings) as (a, b):
        admin = _bearer(admin_key(a))
        victim = admin_key(a, owner="victim")
        assert b.client.get("/v1/tools", headers=_bearer(victim)).status_code == 200
        own_redis.stop()

        def degraded(replica: object) -> bool:
            status = replica.client.get("/v1/status", headers=admin)  # type: ignore[attr-defined]
            assert status.status_code == 200, status.text
            return bool(status.json()["shared_state"]["degraded"])

        assert within(patient(5.0), lambda: degraded(a) and degraded(b)) is not None

        # Changes go on: the poll carries an agent registered on A to B, and nothing is a 5xx.
        registered = a.client.post(
            "/v1/agents",
            headers=admin,
            json={"agent_id": "courier", "tenant": "acme", "allowed_tools": ["acme:*"]},
        )
        assert registered.status_code in (200, 201), registered.text
        book = b.gateway.governance.agents
        assert within(patient(5.0), lambda: book.get("courier") is not None) is not None
        revoked = a.client.delete(f"/v1/keys/{parse_key(victim)[0]}", headers=admin)  # type: ignore[index]
        assert revoked.status_code == 200, revoked.text
        assert a.client.get("/v1/tools", headers=_bearer(victim)).status_code == 401
        assert b.client.get("/v1/tools", headers=_bearer(victim)).status_code == 200  # cached on B
        with page_client(str(a.client.base_url)) as browser:  # a login holds on its own replica
            assert log_in(browser, admin_key(a, owner="alice")).status_code == 303
            assert browser.get("/ui/catalog").status_code == 200

        own_redis.start()  # same port, empty: the replicas reconnect and resync
        refused = lambda: b.client.get("/v1/tools", headers=_bearer(victim)).status_code == 401  # noqa: E731
        took = within(patient(5.0), refused)
        assert took is not None, (
            f"B kept the revoked key past Redis's return (its cache lasts {LONG_POLL_S} s)"
        )
        assert within(patient(5.0), lambda: not degraded(a) and not degraded(b)) is not None
