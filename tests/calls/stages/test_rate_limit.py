"""The rate-limit stage with a fake `next`: over a limit nothing after it runs; a slot outlives no call."""

from __future__ import annotations

import pytest
from prometheus_client import generate_latest

from colonnade.calls.call import Call
from colonnade.calls.envelope import CallResult, CallStatus
from colonnade.calls.stages.rate_limit import RateLimit
from colonnade.config import LimitsSettings
from colonnade.governance.limits import Limiter
from colonnade.governance.principal import Principal, PrincipalKind
from colonnade.observability.metrics import GatewayMetrics
from tests.support.stage_calls import answer, stage_call

BOT = Principal(PrincipalKind.AGENT, "bot", tenant="chaos", persona="agent")


def _limiter(**rule: object) -> Limiter:
    return Limiter(LimitsSettings.model_validate({"rules": [{"name": "r", **rule}]}))


async def test_over_the_limit_the_rest_of_the_pipeline_never_runs() -> None:
    stage = RateLimit(_limiter(per="agent", requests=2, window_s=60))
    ran: list[str] = []

    async def last(call: Call) -> CallResult:
        ran.append(call.request.call_id)
        return await answer()(call)

    results = [await stage(stage_call().evolve(principal=BOT), last) for _ in range(3)]
    assert [r.status for r in results] == [CallStatus.SUCCESS, CallStatus.SUCCESS, CallStatus.RETRYABLE_ERROR]
    assert len(ran) == 2
    assert [u.remaining for u in results[0].handover.limits] == [1]
    assert results[2].handover.limits[0].remaining == 0
    assert results[2].handover.tool is not None, "the refusal keeps the resolved tool"


async def test_a_call_no_rule_applies_to_passes_untouched() -> None:
    stage = RateLimit(_limiter(tools=["other:*"], requests=1))
    first = await stage(stage_call(), answer())
    second = await stage(stage_call(), answer())
    assert first.status is second.status is CallStatus.SUCCESS
    assert first.handover.limits == ()


async def test_a_slot_is_given_back_when_the_call_fails_or_raises() -> None:
    limiter = _limiter(concurrency=1)
    stage = RateLimit(limiter)

    async def boom(call: Call) -> CallResult:
        raise RuntimeError("a stage after it broke")

    with pytest.raises(RuntimeError):
        await stage(stage_call(), boom)
    assert (await stage(stage_call(), answer(CallStatus.TERMINAL_ERROR))).status is CallStatus.TERMINAL_ERROR
    assert (await stage(stage_call(), answer())).status is CallStatus.SUCCESS


async def test_metrics_count_refusals_and_use_by_limit_name() -> None:
    limiter = _limiter(requests=2, window_s=60)
    metrics = GatewayMetrics()
    metrics.track_limits(limiter)
    stage = RateLimit(limiter)
    for _ in range(3):
        await stage(stage_call(), answer())
    text = generate_latest(metrics.registry).decode()
    assert 'colonnade_rate_limit_refused_total{limit="r"} 1.0' in text
    assert 'colonnade_rate_limit_admitted_total{limit="r"} 2.0' in text
    assert 'colonnade_rate_limit_use_ratio{limit="r"} 1.0' in text
    assert "colonnade_rate_limit_degraded 0.0" in text
