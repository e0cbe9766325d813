"""A policy reload, a contract publish (by a replica or by the CLI), a key revoked by the CLI and a
server added over REST reach every replica within a second, not at their (five-minute) polls."""

from __future__ import annotations

import asyncio
from pathlib import Path

import yaml
from typer.testing import CliRunner

from colonnade.cli import app
from colonnade.config import PolicySettings
from colonnade.governance.identity.api_keys import parse_key
from tests.shared_state.replicas import LONG_POLL_S, admin_key, replica_settings, replicas, within
from tests.support.fault_contract import fault_contract
from tests.support.machine_load import patient

DENY_ONE = """package colonnade.policy

import rego.v1

deny contains "tagged one" if "one" in input.tool.tags
"""
DENY_TWO = DENY_ONE.replace('"one"', '"two"')


def _bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


async def test_a_policy_reload_asked_of_one_replica_reloads_the_others(
    tmp_path: Path, replica_database: str, redis_url: str, redis_prefix: str
) -> None:
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "tags.rego").write_text(DENY_ONE, encoding="utf-8")
    policy = PolicySettings(
        builtin=False, directories=[policies], reload_interval_s=0, isolate_compilation=False
    )
    settings = [
        replica_settings(tmp_path, replica_database, redis_url, redis_prefix, n, policy=policy) for n in "abc"
    ]
    with replicas(settings) as running:
        a = running[0]
        admin = _bearer(admin_key(a))
        first = {r.client.get("/v1/policy", headers=admin).json()["version"] for r in running}
        assert len(first) == 1

        (policies / "tags.rego").write_text(DENY_TWO, encoding="utf-8")
        reloaded = a.client.post("/v1/policy/reload", headers=admin)
        assert reloaded.status_code == 200, reloaded.text
        version = reloaded.json()["version"]
        assert version not in first

        def everywhere() -> bool:
            return all(
                r.client.get("/v1/policy", headers=admin).json()["version"] == version for r in running
            )

        assert within(patient(1.0), everywhere) is not None, "the other replicas kept the old policy set"


async def test_a_contract_published_on_one_replica_or_by_the_cli_is_served_by_the_others(
    tmp_path: Path, replica_database: str, redis_url: str, redis_prefix: str
) -> None:
    settings = [replica_settings(tmp_path, replica_database, redis_url, redis_prefix, n) for n in "ab"]
    first, second = tmp_path / "faults-1.yaml", tmp_path / "faults-2.yaml"
    first.write_text(yaml.safe_dump(fault_contract("http://127.0.0.1:9")), encoding="utf-8")
    second.write_text(yaml.safe_dump(fault_contract("http://127.0.0.1:9", version="2.0.0")), encoding="utf-8")
    with replicas(settings) as (a, b):
        received = b.gateway.shared.fanout.received
        a.run(a.gateway.publish_files([first]))
        served = lambda: b.gateway.catalog.active_version("chaos", "faults") == "1.0.0"  # noqa: E731
        assert within(patient(1.0), served) is not None
        assert b.gateway.shared.fanout.received > received

        env = {
            "COLONNADE_DATA_DIR": str(tmp_path / "data"),
            "COLONNADE_DATABASE_URL": replica_database,
            "COLONNADE_SHARED_STATE__REDIS_URL": redis_url,
            "COLONNADE_SHARED_STATE__KEY_PREFIX": redis_prefix,
        }
        published = await asyncio.to_thread(
            CliRunner().invoke, app, ["contract", "publish", str(second)], env=env
        )
        assert published.exit_code == 0, published.output

        def served_everywhere() -> bool:
            return all(r.gateway.catalog.active_version("chaos", "faults") == "2.0.0" for r in (a, b))

        took = within(patient(1.0), served_everywhere)
        assert took is not None, "the CLI's publish did not reach every replica within 1 s"


async def test_a_key_revoked_by_the_cli_is_refused_by_every_replica_within_a_second(
    tmp_path: Path, replica_database: str, redis_url: str, redis_prefix: str
) -> None:
    settings = [replica_settings(tmp_path, replica_database, redis_url, redis_prefix, n) for n in "ab"]
    with replicas(settings) as running:
        victim = admin_key(running[0], owner="victim")
        for replica in running:
            assert replica.client.get("/v1/tools", headers=_bearer(victim)).status_code == 200
        env = {
            "COLONNADE_DATA_DIR": str(tmp_path / "data"),
            "COLONNADE_DATABASE_URL": replica_database,
            "COLONNADE_SHARED_STATE__REDIS_URL": redis_url,
            "COLONNADE_SHARED_STATE__KEY_PREFIX": redis_prefix,
        }
        key_id = parse_key(victim)[0]  # type: ignore[index]
        revoked = await asyncio.to_thread(CliRunner().invoke, app, ["keys", "revoke", key_id], env=env)
        assert revoked.exit_code == 0, revoked.output

        def refused() -> bool:
            return all(r.client.get("/v1/tools", headers=_bearer(victim)).status_code == 401 for r in running)

        assert within(patient(1.0), refused) is not None, f"cached for {LONG_POLL_S} s instead"


async def test_a_server_added_and_removed_over_rest_on_one_replica_is_so_on_the_others(
    tmp_path: Path, replica_database: str, redis_url: str, redis_prefix: str
) -> None:
    settings = [
        replica_settings(tmp_path, replica_database, redis_url, redis_prefix, n, server={"admin_api": True})
        for n in "ab"
    ]
    definition = {
        "name": "elsewhere",
        "transport": "http",
        "url": "http://127.0.0.1:9/mcp",
        "start": "lazy",
    }
    with replicas(settings) as (a, b):
        admin = _bearer(admin_key(a))
        added = a.client.post("/v1/servers", headers=admin, json=definition)
        assert added.status_code == 201, added.text
        known = lambda: b.client.get("/v1/servers/elsewhere", headers=admin).status_code == 200  # noqa: E731
        assert within(patient(1.0), known) is not None
        assert (
            b.client.get("/v1/servers/elsewhere", headers=admin).json()["config"]["url"] == definition["url"]
        )

        removed = b.client.delete("/v1/servers/elsewhere", headers=admin)
        assert removed.status_code == 200, removed.text
        gone = lambda: a.client.get("/v1/servers/elsewhere", headers=admin).status_code == 404  # noqa: E731
        assert within(patient(1.0), gone) is not None
