"""Three gateway replicas behind HAProxy (round-robin, no stickiness) on one PostgreSQL database.

The replicas are `colonnade serve` processes set up as `make replicas` sets them up
(tests/support/replicas.py); they serve the fault backend's contract. Through the balancer:
- the official SDK client in the stateless 2026-07-28 era makes 200 calls; every one succeeds and
  each replica's own metrics show it answered its share;
- a handshake-era (2025-11-25) session crosses replicas on every request;
- a contract published at the start-up of one replica is served by the others (the catalog poll);
- `kill -9` of one replica under keyed load: no key has two effects in the backend's ledger, and
  every key, resent through the balancer, gets a definite answer.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import httpx2
import mcp_types as types
import pytest
import yaml
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.support.exactly_once import NOT_YET, outcome_of, verify_exactly_once
from tests.support.fault_contract import fault_contract
from tests.support.machine_load import patient
from tests.support.replicas import REPLICA_HEADER, ReplicaSet, running_replicas

READ_TOOL = "chaos__faults__get_item"
CALLS = 200
CONCURRENT = 8
MODERN, LEGACY = "2026-07-28", "2025-11-25"


@pytest.fixture(scope="module")
def contract(tmp_path_factory: pytest.TempPathFactory, fault_url: str) -> Path:
    path = tmp_path_factory.mktemp("contracts") / "faults.yaml"
    path.write_text(yaml.safe_dump(fault_contract(fault_url), sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def deployment(
    tmp_path_factory: pytest.TempPathFactory, postgres_url: str, contract: Path
) -> Iterator[ReplicaSet]:
    with running_replicas(tmp_path_factory.mktemp("replicas"), postgres_url, [contract]) as replicas:
        yield replicas


async def _sdk_calls(
    deployment: ReplicaSet, mode: Literal["auto", "legacy"]
) -> tuple[str, list[types.CallToolResult], Counter[str]]:
    """CALLS reads through the balancer with one SDK client; also who answered each HTTP request."""
    answered: Counter[str] = Counter()

    async def note(response: httpx2.Response) -> None:
        answered[response.headers.get(REPLICA_HEADER, "?")] += 1

    hooks = {"response": [note]}
    async with (
        httpx2.AsyncClient(headers=deployment.headers, timeout=60, event_hooks=hooks) as http,
        Client(streamable_http_client(deployment.mcp_url, http_client=http), mode=mode) as client,
    ):
        gate = asyncio.Semaphore(CONCURRENT)

        async def one() -> types.CallToolResult:
            async with gate:
                return await client.call_tool(READ_TOOL, {"item_id": "I-1"})

        results = await asyncio.gather(*(one() for _ in range(CALLS)))
        return str(client.protocol_version), list(results), answered


async def test_sdk_calls_in_the_stateless_era_reach_every_replica(deployment: ReplicaSet) -> None:
    before = deployment.calls_served()
    era, results, answered = await _sdk_calls(deployment, "auto")
    after = deployment.calls_served()

    assert era == MODERN
    failed = [result for result in results if result.is_error]
    assert failed == [], failed[:3]
    assert all(result.structured_content == {"id": "I-1", "value": "one"} for result in results)
    served = {name: after[name] - before[name] for name in after}
    assert sum(served.values()) == CALLS, served
    # Round-robin per request: each of three replicas gets about a third; a half of that is the bound.
    assert all(count >= CALLS / len(served) / 2 for count in served.values()), served
    assert set(answered) == set(served), answered
    print(f"\n{CALLS} calls in the {era} era, answered per replica: {served}")


async def test_sdk_session_in_the_handshake_era_crosses_replicas(deployment: ReplicaSet) -> None:
    era, results, answered = await _sdk_calls(deployment, "legacy")

    assert era == LEGACY
    assert [result for result in results if result.is_error] == []
    assert len(answered) == len(deployment.replicas), answered


def test_a_contract_published_through_one_replica_is_served_by_the_others(
    deployment: ReplicaSet, contract: Path, fault_url: str
) -> None:
    extra = contract.with_name("extra.yaml")
    document = {**fault_contract(fault_url), "name": "extra", "display_name": "Another fault backend"}
    extra.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    publisher, others = deployment.replicas[0], deployment.replicas[1:]
    publisher.stop()
    started = time.monotonic()
    publisher.start(contracts=[contract, extra])
    published = time.monotonic()

    waited: dict[str, float] = {}
    deadline = published + patient(20)  # the catalog poll is every 2 s
    while len(waited) < len(others):
        assert time.monotonic() < deadline, f"not served after {patient(20):.0f} s by: {others}"
        for replica in others:
            if replica.name not in waited and "chaos:extra:get_item" in _tool_names(replica.url, deployment):
                waited[replica.name] = time.monotonic() - published
        time.sleep(0.1)
    deployment.wait_all_served()
    served = httpx2.post(
        f"{deployment.lb_url}/v1/calls",
        json={"tool_id": "chaos:extra:get_item", "input": {"item_id": "I-2"}},
        headers=deployment.headers,
        timeout=60,
    ).json()
    assert served["status"] == "success" and served["output"]["value"] == "two", served
    shown = {name: f"{seconds:.1f} s" for name, seconds in waited.items()}
    print(f"\npublisher restarted in {published - started:.1f} s; served by the others after {shown}")


def _tool_names(url: str, deployment: ReplicaSet) -> set[str]:
    answer = httpx2.get(f"{url}/v1/tools", headers=deployment.headers, timeout=30)
    assert answer.status_code == 200, answer.text[:300]
    return {tool["canonical_name"] for tool in answer.json()["tools"]}


# kill -9 of one replica under keyed load -----------------------------------------------------------

PAYMENTS, EFFECTS = 60, 30
KILL_AT = 0.4  # the share of calls the backend has carried out when the replica is killed
TIMEOUT_MS = 10_000  # a key claimed by the dead replica is "in progress" until its lease ends after this
Plans = dict[str, tuple[str, dict[str, Any]]]


def _plans(run: str) -> Plans:
    rng = random.Random(20261202)
    plans: Plans = {}
    for n in range(PAYMENTS + EFFECTS):
        tool = "create_effect" if n % 3 == 2 else "create_payment"
        key = f"replicas-{run}-{tool}-{n}"
        plans[key] = (tool, {"note": key, "fault": f"slow:{rng.randint(0, 600)}"})
    return plans


async def _send(
    client: httpx2.AsyncClient, deployment: ReplicaSet, key: str, plan: tuple[str, dict[str, Any]]
) -> dict[str, Any] | None:
    """A keyed REST call through the balancer; None when no replica answered it (HAProxy's 502/503
    for a replica that died mid-request, or a cut connection)."""
    tool, arguments = plan
    request = {
        "tool_id": f"chaos:faults:{tool}",
        "input": arguments,
        "constraints": {
            "idempotency_key": key,
            "timeout_ms": TIMEOUT_MS,
            "retry_policy": {"max_attempts": 1},
        },
    }
    try:
        response = await client.post(f"{deployment.lb_url}/v1/calls", json=request)
        answer: dict[str, Any] = response.json()
    except (httpx2.HTTPError, json.JSONDecodeError):
        return None
    return answer if isinstance(answer, dict) and "status" in answer else None


async def _burst_then_kill(
    deployment: ReplicaSet, plans: Plans, fault_url: str, victim: str
) -> dict[str, dict[str, Any] | None]:
    async with httpx2.AsyncClient(headers=deployment.headers, timeout=60) as client:
        calls = [asyncio.create_task(_send(client, deployment, k, p)) for k, p in plans.items()]
        give_up = time.monotonic() + patient(30)
        while len((await client.get(f"{fault_url}/ledger")).json()["ledger"]) < KILL_AT * len(plans):
            assert time.monotonic() < give_up, "the backend carried out too few calls in time"
            await asyncio.sleep(0.01)
        deployment.by_name(victim).kill()
        answers = await asyncio.gather(*calls)
    return dict(zip(plans, answers, strict=True))


async def _resend_until_definite(deployment: ReplicaSet, plans: Plans) -> dict[str, dict[str, Any]]:
    final: dict[str, dict[str, Any]] = {}
    give_up = time.monotonic() + TIMEOUT_MS / 1000 + patient(40)  # the dead replica's leases end first
    async with httpx2.AsyncClient(headers=deployment.headers, timeout=60) as client:
        while pending := [key for key in plans if key not in final]:
            assert time.monotonic() < give_up, f"{len(pending)} keys never got a definite answer"
            answers = await asyncio.gather(*(_send(client, deployment, key, plans[key]) for key in pending))
            for key, answer in zip(pending, answers, strict=True):
                if answer is not None and outcome_of(answer) not in NOT_YET:
                    final[key] = answer
            await asyncio.sleep(0.5)
    return final


def test_kill_9_of_one_replica_under_keyed_load(deployment: ReplicaSet, fault_url: str) -> None:
    httpx2.post(f"{fault_url}/reset")
    httpx2.post(f"{fault_url}/health/up")
    plans = _plans(f"{time.time_ns()}")
    victim = deployment.replicas[1]

    first = asyncio.run(_burst_then_kill(deployment, plans, fault_url, victim.name))
    final = asyncio.run(_resend_until_definite(deployment, plans))
    ledger = httpx2.get(f"{fault_url}/ledger").json()["ledger"]
    kinds = {key: "payment" if tool == "create_payment" else "effect" for key, (tool, _) in plans.items()}

    tally = verify_exactly_once(first, final, ledger, kinds)
    # The kill cut calls the victim had in flight: the test saw the failure it is about.
    assert tally["first: no answer"] > 0, tally
    victim.start()
    deployment.wait_all_served()
    print(f"\nkill -9 of {victim.name} behind HAProxy: {dict(sorted(tally.items()))}")
