"""Limits on one gateway without Redis: the pipeline refuses what is over a limit, before the backend."""

from __future__ import annotations

import asyncio
import logging

import pytest

from colonnade.calls.envelope import CallStatus
from colonnade.calls.manifest import Limits, ManifestOverride, ToolRate
from colonnade.config import ConfigError, LimitsSettings, load_settings
from colonnade.governance.principal import Principal, PrincipalKind
from tests.governance.limits.conftest import (
    BOT,
    SLOW_TOOL,
    TOOL,
    Served,
    build_gateway,
    call,
    limit_settings,
    running,
)
from tests.support.loopback import free_port

OTHER_BOT = Principal(PrincipalKind.AGENT, "other-bot", tenant="acme", persona="agent")
ALICE = Principal(PrincipalKind.USER, "alice", tenant="acme", persona="developer")


async def test_an_agent_over_its_limit_is_refused_retryable_and_the_backend_never_sees_it(
    shop: tuple[str, Served],
) -> None:
    url, served = shop
    rules = [{"name": "agent-minute", "per": "agent", "requests": 5, "window_s": 60}]
    async with running(build_gateway(limit_settings(rules), url)) as gateway:
        before = served.hits
        results = [await call(gateway) for _ in range(8)]
        assert [r.status for r in results] == [CallStatus.SUCCESS] * 5 + [CallStatus.RETRYABLE_ERROR] * 3
        refused = results[-1].error
        assert refused is not None and refused.code == "R-CAP-RATE-LIMITED"
        details = refused.details
        assert details["limit_name"] == "agent-minute" and details["limit"] == 5
        assert details["window_s"] == 60 and details["enforced"] == "local_share"
        assert 0 < details["retry_after_ms"] <= 60_001
        assert served.hits - before == 5, "refused calls never reached the backend"

        assert (await call(gateway, OTHER_BOT)).status is CallStatus.SUCCESS, "each agent has its own count"
        assert (await call(gateway, ALICE)).status is CallStatus.SUCCESS, "`per: agent` counts agents only"
        status = (await gateway.status())["limits"]
        assert status["rules"] == ["agent-minute"] and status["refused"] == {"agent-minute": 3}
        assert status["backend"] == "process" and status["degraded"] is False


async def test_retry_after_ms_is_usable_a_call_after_it_succeeds(shop: tuple[str, Served]) -> None:
    rules = [{"name": "burst", "per": ["principal", "tool"], "requests": 3, "window_s": 0.5}]
    async with running(build_gateway(limit_settings(rules), shop[0])) as gateway:
        for _ in range(3):
            assert (await call(gateway)).status is CallStatus.SUCCESS
        refused = await call(gateway)
        assert refused.error is not None and refused.error.code == "R-CAP-RATE-LIMITED"
        await asyncio.sleep(refused.error.details["retry_after_ms"] / 1000)
        assert (await call(gateway)).status is CallStatus.SUCCESS


async def test_a_tools_own_rate_from_its_manifest_counts_every_caller(shop: tuple[str, Served]) -> None:
    override = ManifestOverride(limits=Limits(rate=[ToolRate(requests=2, window_s=60)]))
    gateway = build_gateway(limit_settings([]), shop[0], overrides={TOOL: override})
    async with running(gateway):
        outcomes = [await call(gateway, who) for who in (BOT, OTHER_BOT, ALICE)]
        assert [o.status for o in outcomes][:2] == [CallStatus.SUCCESS] * 2
        third = outcomes[2].error
        assert third is not None and third.code == "R-CAP-RATE-LIMITED"
        assert third.details["limit_name"] == f"tool:{TOOL}"
        assert (await call(gateway, tool=SLOW_TOOL)).status is CallStatus.SUCCESS, "another tool"


async def test_concurrent_calls_over_a_rules_concurrency_are_refused_and_slots_come_back(
    shop: tuple[str, Served],
) -> None:
    rules = [{"name": "two-at-once", "per": "tenant", "concurrency": 2, "tools": ["acme:shop:*"]}]
    async with running(build_gateway(limit_settings(rules), shop[0])) as gateway:
        results = await asyncio.gather(*(call(gateway, tool=SLOW_TOOL) for _ in range(5)))
        codes = sorted(r.error.code if r.error else "ok" for r in results)
        assert codes == ["R-CAP-RATE-LIMITED"] * 3 + ["ok"] * 2
        refused = next(r.error for r in results if r.error is not None)
        assert refused.details["kind"] == "concurrency" and refused.details["window_s"] is None
        assert (await call(gateway, tool=SLOW_TOOL)).status is CallStatus.SUCCESS, "the slots came back"


def test_limit_settings_name_what_is_wrong(tmp_path: pytest.TempPathFactory) -> None:
    with pytest.raises(ValueError, match="sets neither requests nor concurrency"):
        LimitsSettings.model_validate({"rules": [{"name": "empty"}]})
    with pytest.raises(ValueError, match="given more than once: a"):
        LimitsSettings.model_validate(
            {"rules": [{"name": "a", "requests": 1}, {"name": "a", "concurrency": 1}]}
        )
    config = tmp_path / "colonnade.yaml"  # type: ignore[operator]
    config.write_text("limits:\n  rules:\n    - name: x\n      requests: 5\n      per: agnet\n")
    with pytest.raises(ConfigError) as raised:
        load_settings(config, environ={})
    assert "limits.rules.0.per" in str(raised.value)


async def test_with_redis_unreachable_from_the_start_each_replica_enforces_the_share_it_is_told(
    shop: tuple[str, Served], caplog: pytest.LogCaptureFixture
) -> None:
    nobody = f"redis://127.0.0.1:{free_port()}/0"  # a real address where no Redis listens
    rules = [{"name": "agent-minute", "per": "agent", "requests": 12, "window_s": 60}]
    settings = limit_settings(rules, redis=(nobody, "cln-test-nobody"), replicas=4)
    async with running(build_gateway(settings, shop[0])) as gateway:
        with caplog.at_level(logging.WARNING, logger="colonnade.governance.limits"):
            results = [await call(gateway) for _ in range(5)]
        assert [r.status for r in results] == [CallStatus.SUCCESS] * 3 + [CallStatus.RETRYABLE_ERROR] * 2
        refused = results[-1].error
        assert refused is not None and refused.details["enforced"] == "local_share"
        assert refused.details["limit"] == 3 and "this replica's share" in refused.message
        status = (await gateway.status())["limits"]
        assert (status["degraded"], status["replicas"], status["replicas_from"]) == (True, 4, "setting")
        degraded_lines = [r for r in caplog.records if "rate limits degraded" in r.getMessage()]
        assert len(degraded_lines) == 1, "logged once, not per call"
        assert "1/4 of each limit" in degraded_lines[0].getMessage()


async def test_a_contracts_runtime_rate_limits_are_the_tools_own_rate(shop: tuple[str, Served]) -> None:
    runtime = {"rate_limits": [{"requests": 2, "window_s": 60, "per": ["agent"]}]}
    gateway = build_gateway(limit_settings([]), shop[0], runtime=runtime)
    async with running(gateway):
        assert [(await call(gateway)).status for _ in range(3)][-1] is CallStatus.RETRYABLE_ERROR
        assert (await call(gateway, OTHER_BOT)).status is CallStatus.SUCCESS, "per agent"
        tool = gateway.catalog.get(TOOL)
        assert tool is not None and gateway.manifests.for_tool(tool).limits.rate[0].requests == 2
        plain = gateway.catalog.get(SLOW_TOOL)
        assert plain is not None and "rate_limits" not in plain.runtime.model_dump(mode="json"), (
            "a tool without rate limits dumps as before the field existed: its digest is unchanged"
        )
