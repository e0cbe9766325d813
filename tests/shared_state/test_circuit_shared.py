"""A circuit opened on one replica fails fast on the others; a backend found unhealthy on one is
unhealthy on the others. Each replica still decides from its own state: no Redis on the call path."""

from __future__ import annotations

from pathlib import Path

import yaml
from starlette.types import ASGIApp, Receive, Scope, Send

from tests.shared_state.replicas import admin_key, replica_settings, replicas, within
from tests.support.fault_backend import FaultBackend, create_app
from tests.support.fault_contract import fault_contract
from tests.support.loopback import serve_in_thread
from tests.support.machine_load import patient

TOOL = "chaos:faults:get_item"


class _Counted:
    """Counts the backend's requests (readiness probes aside)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app, self.requests = app, 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] != "/healthz":
            self.requests += 1
        await self.app(scope, receive, send)


async def test_a_circuit_opened_on_one_replica_fails_fast_on_another(
    tmp_path: Path, replica_database: str, redis_url: str, redis_prefix: str
) -> None:
    backend = _Counted(create_app(FaultBackend()))
    with serve_in_thread(backend) as backend_url:
        contract = tmp_path / "faults.yaml"
        contract.write_text(yaml.safe_dump(fault_contract(backend_url)), encoding="utf-8")
        settings = [
            replica_settings(tmp_path, replica_database, redis_url, redis_prefix, n, contracts=[contract])
            for n in "ab"
        ]
        with replicas(settings) as (a, b):
            headers = {"authorization": f"Bearer {admin_key(a)}"}

            def call(replica_client: object, fault: str) -> str:
                response = replica_client.post(  # type: ignore[attr-defined]
                    "/v1/calls",
                    headers=headers,
                    json={"tool_id": TOOL, "input": {"item_id": "i1", "fault": fault}},
                )
                result = response.json()
                return str(result["error"]["code"])

            answered = "I-REQ-UPSTREAM-NOT-FOUND"  # no item i1: the backend answers 404
            assert call(b.client, "ok") == answered  # B knows the backend as one that answers
            received = b.gateway.shared.fanout.received
            codes = [call(a.client, "503") for _ in range(10)]
            assert codes[-1] == "R-UPSTREAM-CIRCUIT-OPEN", codes

            assert within(patient(1.0), lambda: b.gateway.shared.fanout.received > received) is not None
            before = backend.requests
            assert call(b.client, "ok") == "R-UPSTREAM-CIRCUIT-OPEN"  # the backend would answer now
            assert backend.requests == before, "B called the backend whose circuit A opened"


async def test_a_backend_found_unhealthy_on_one_replica_is_unhealthy_on_another(
    tmp_path: Path, replica_database: str, redis_url: str, redis_prefix: str
) -> None:
    settings = [
        replica_settings(tmp_path, replica_database, redis_url, redis_prefix, n, health_interval_s=300)
        for n in "ab"
    ]
    with serve_in_thread(create_app(FaultBackend())) as backend_url, replicas(settings) as (a, b):
        missing = f"{backend_url}/no-such-readiness"  # answers 404: a failing readiness check
        healthy = f"{backend_url}/healthz"
        for url in (missing, healthy):
            b.gateway.health.watch(url)
        for _ in range(2):  # two failed probes in a row on A mark it unhealthy there
            a.run(a.gateway.health.probe(missing))
        assert not a.gateway.health.healthy(missing)

        assert within(patient(1.0), lambda: not b.gateway.health.healthy(missing)) is not None
        assert b.gateway.health.healthy(healthy)

        # "Healthy again" from elsewhere is checked, not trusted: B probes and finds it failing here.
        b.run(b.gateway.health.seen_elsewhere(missing, True))
        assert not b.gateway.health.healthy(missing)
        b.run(b.gateway.health.seen_elsewhere(healthy, False))
        assert not b.gateway.health.healthy(healthy)
        b.run(b.gateway.health.seen_elsewhere(healthy, True))
        assert b.gateway.health.healthy(healthy)
