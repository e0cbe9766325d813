"""A rate limit holds for the whole deployment: three replicas behind HAProxy, one Redis count.

One caller may make L calls a minute; it sends 3L through the balancer (round-robin, so each
replica sees a third). The replicas count in the same Redis counters (one Lua script per call), so
L succeed, within 5 %, and every other call is refused `R-CAP-RATE-LIMITED`, retryable, with a
`retry_after_ms` a client can use and the REST `Retry-After` header.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
import yaml

from tests.support.fault_contract import fault_contract
from tests.support.replicas import REPLICA_HEADER, ReplicaSet, running_replicas

READ_TOOL = "chaos__faults__get_item"
LIMIT = 30
RULES = [{"name": "caller-minute", "per": "principal", "requests": LIMIT, "window_s": 60}]


@pytest.fixture(scope="module")
def deployment(
    tmp_path_factory: pytest.TempPathFactory, postgres_url: str, fault_url: str
) -> Iterator[ReplicaSet]:
    contract = tmp_path_factory.mktemp("contracts") / "faults.yaml"
    contract.write_text(yaml.safe_dump(fault_contract(fault_url), sort_keys=False), encoding="utf-8")
    settings = {"COLONNADE_LIMITS__RULES": json.dumps(RULES)}
    folder: Path = tmp_path_factory.mktemp("limited-replicas")
    with running_replicas(folder, postgres_url, [contract], settings=settings) as replicas:
        yield replicas


def test_a_limit_of_l_per_minute_admits_l_of_3l_calls_across_three_replicas(deployment: ReplicaSet) -> None:
    outcomes: Counter[str] = Counter()
    answered: Counter[str] = Counter()
    refusals: list[httpx2.Response] = []
    with httpx2.Client(base_url=deployment.lb_url, headers=deployment.headers, timeout=60) as client:
        for number in range(3 * LIMIT):
            body = {"tool_id": READ_TOOL, "call_id": f"limited-{number}", "input": {"item_id": "I-1"}}
            response = client.post("/v1/calls", json=body)
            answered[response.headers.get(REPLICA_HEADER, "?")] += 1
            result = response.json()
            code = result["error"]["code"] if result.get("error") else result["status"]
            outcomes[code] += 1
            if code == "R-CAP-RATE-LIMITED":
                refusals.append(response)

    assert len(answered) == len(deployment.replicas), answered  # every replica counted its share
    assert abs(outcomes["success"] - LIMIT) <= max(1, LIMIT * 0.05), outcomes
    assert outcomes["success"] + outcomes["R-CAP-RATE-LIMITED"] == 3 * LIMIT, outcomes
    for response in refusals:
        result = response.json()
        assert result["status"] == "retryable_error"
        wait_ms = result["error"]["details"]["retry_after_ms"]
        assert 0 < wait_ms <= 60_000
        assert int(response.headers["Retry-After"]) >= 1
