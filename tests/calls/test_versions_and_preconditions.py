"""Version pinning, digests, network allow-lists, concurrency caps and backend health."""

from __future__ import annotations

import asyncio

import httpx2
import pytest

from colonnade.calls.envelope import CallConstraints, CallStatus
from colonnade.contracts.model import Contract
from tests.calls.conftest import Harness
from tests.support.fault_contract import fault_contract
from tests.support.loop_lag import loop_lag


def _publish(harness: Harness, version: str, **runtime: object) -> None:
    data = fault_contract(harness.fault_url, version=version)
    if runtime:
        for endpoint in data["endpoints"]:
            if endpoint["operation_id"] == "get_item":
                endpoint["runtime"] = runtime
    harness.catalog.publish(Contract.model_validate(data))


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("1.0.0", "1.0.0"),
        ("^1", "1.4.0"),
        ("~1.2", "1.2.5"),
        ("1.x", "1.4.0"),
        ("2", "2.1.0"),
        (None, "2.1.0"),
    ],
)
async def test_version_ranges_resolve_to_one_exact_version(
    harness: Harness, spec: str | None, expected: str
) -> None:
    for version in ("1.2.5", "1.4.0", "2.1.0"):
        _publish(harness, version)
    result = await harness.call("get_item", input={"item_id": "I-1"}, tool_version=spec)
    assert result.status is CallStatus.SUCCESS, result.error
    assert result.provenance is not None and result.provenance.tool_version == expected
    assert len(result.provenance.digest) == 64


async def test_ranges_across_majors_are_ambiguous(harness: Harness) -> None:
    _publish(harness, "2.0.0")
    result = await harness.call("get_item", input={"item_id": "I-1"}, tool_version=">=1.0.0")
    assert result.error is not None and result.error.code == "C-CONTRACT-AMBIGUOUS-VERSION"
    assert result.error.details["matching"] == ["1.0.0", "2.0.0"]


async def test_unmatched_version_lists_what_exists(harness: Harness) -> None:
    result = await harness.call("get_item", input={"item_id": "I-1"}, tool_version="^3")
    assert result.error is not None and result.error.code == "C-CONTRACT-VERSION-MISMATCH"
    assert result.error.details["available"] == ["1.0.0"]


async def test_unexpected_digest_is_refused(harness: Harness) -> None:
    result = await harness.call("get_item", input={"item_id": "I-1"}, provenance={"digest": "0" * 64})
    assert result.error is not None and result.error.code == "C-CONTRACT-DIGEST-MISMATCH"


async def test_call_net_allowlist_must_admit_the_backend(harness: Harness) -> None:
    denied = await harness.call(
        "get_item", input={"item_id": "I-1"}, constraints=CallConstraints(net_allowlist=["api.example.com"])
    )
    assert denied.status is CallStatus.TERMINAL_ERROR
    assert denied.error is not None and denied.error.code == "P-PRECOND-NET-DENIED"
    assert harness.ledger() == []
    allowed = await harness.call(
        "get_item", input={"item_id": "I-1"}, constraints=CallConstraints(net_allowlist=["127.0.0.1"])
    )
    assert allowed.status is CallStatus.SUCCESS


async def test_concurrency_cap_fails_fast_and_retryable(harness: Harness) -> None:
    _publish(harness, "1.1.0", concurrency_max=2)
    results = await asyncio.gather(
        *(
            harness.call(
                "get_item",
                "slow:300",
                input={"item_id": "I-1"},
                constraints=CallConstraints(retry_policy={"max_attempts": 1}),  # type: ignore[arg-type]
            )
            for _ in range(5)
        )
    )
    capped = [r for r in results if r.error is not None and r.error.code == "R-CAP-CONCURRENCY"]
    assert len(capped) == 3 and all(r.status is CallStatus.RETRYABLE_ERROR for r in capped)
    assert all(r.error is not None and r.error.details["retry_after_ms"] > 0 for r in capped)
    assert sum(r.status is CallStatus.SUCCESS for r in results) == 2


async def test_unhealthy_backend_fails_fast_without_a_call(harness: Harness) -> None:
    assert (await harness.call("get_item", input={"item_id": "I-1"})).status is CallStatus.SUCCESS
    httpx2.post(f"{harness.fault_url}/health/down")
    try:
        for _ in range(3):
            await harness.health.probe_all()
        async with loop_lag() as lag:
            result = await harness.call("put_item", input={"item_id": "I-1", "value": "x"})
        assert result.error is not None and result.error.code == "S-TOOL-UNAVAILABLE"
        assert result.metrics.duration_ms < 50 + lag.worst_ms  # the loop's own lateness is the machine's
        assert harness.ledger() == []
    finally:
        httpx2.post(f"{harness.fault_url}/health/up")
    await harness.health.probe_all()
    assert (
        await harness.call("put_item", input={"item_id": "I-1", "value": "x"})
    ).status is CallStatus.SUCCESS
