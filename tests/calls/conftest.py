"""The full call pipeline over the real fault backend (a child process) and a real database."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import httpx2
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.adapters.health_monitor import HealthMonitor
from colonnade.calls.envelope import CallConstraints, CallRequest, CallResult, RetryPolicy
from colonnade.calls.service import CallService
from colonnade.calls.two_phase import TwoPhaseCoordinator
from colonnade.catalog.catalog import Catalog
from colonnade.contracts.model import Contract
from colonnade.governance.principal import Principal
from colonnade.runtime.gateway import Gateway
from colonnade.store import migrate_engine
from tests.support.fault_contract import fault_contract
from tests.support.loopback import free_port, stop_process, wait_http
from tests.support.repo import ROOT


@pytest.fixture(scope="session")
def fault_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    log = (tmp_path_factory.mktemp("fault-backend") / "backend.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.support.fault_backend", "--port", str(port)],
        cwd=ROOT,
        stdout=log,  # a file, not a pipe nobody reads: a full pipe would stall the backend
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_http(f"{url}/healthz", proc)
        yield url
    finally:
        stop_process(proc)
        log.close()


@dataclass
class Harness:
    service: CallService
    catalog: Catalog
    coordinator: TwoPhaseCoordinator
    health: HealthMonitor
    fault_url: str
    engine: AsyncEngine
    gateway: Gateway

    async def call(
        self, tool: str, fault: str = "ok", *, principal: Principal | None = None, **kwargs: Any
    ) -> CallResult:
        """Call `chaos:faults:<tool>`; `constraints` and envelope fields may be given as keywords."""
        arguments = dict(kwargs.pop("input", {}))
        if fault != "ok":
            arguments["fault"] = fault
        constraints = kwargs.pop("constraints", CallConstraints())
        name = f"chaos:faults:{tool}"
        request = CallRequest(tool_id=name, input=arguments, constraints=constraints, **kwargs)
        return await self.service.call(request, principal)

    def ledger(self) -> list[dict[str, Any]]:
        entries: list[dict[str, Any]] = httpx2.get(f"{self.fault_url}/ledger").json()["ledger"]
        return entries


def quick_retries(attempts: int = 3) -> RetryPolicy:
    return RetryPolicy(max_attempts=attempts, base_ms=5, cap_ms=20, jitter="full")


async def build_harness(
    engine: AsyncEngine, fault_url: str, *, window_ms: int = 60_000, audit_calls: bool = True
) -> tuple[Harness, Gateway]:
    """The gateway built from parts: the fault contract's catalog, a fast health monitor, this engine."""
    catalog = Catalog()
    catalog.publish(Contract.model_validate(fault_contract(fault_url, window_ms=window_ms)))
    health = HealthMonitor(interval_s=0.05)
    gateway = Gateway(engine=engine, catalog=catalog, health=health, audit_calls=audit_calls)
    assert gateway.two_phase is not None
    harness = Harness(gateway.calls, catalog, gateway.two_phase, gateway.health, fault_url, engine, gateway)
    return harness, gateway


@pytest.fixture
async def harness(empty_engine: AsyncEngine, fault_url: str) -> AsyncIterator[Harness]:
    await migrate_engine(empty_engine)
    httpx2.post(f"{fault_url}/reset")
    httpx2.post(f"{fault_url}/health/up")
    built, gateway = await build_harness(empty_engine, fault_url)
    yield built
    await gateway.aclose()
