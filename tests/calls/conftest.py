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
from colonnade.adapters.http import HttpAdapter
from colonnade.calls.default_pipeline import PipelineParts, build_pipeline
from colonnade.calls.envelope import CallConstraints, CallRequest, CallResult, RetryPolicy
from colonnade.calls.service import CallService
from colonnade.calls.two_phase import TwoPhaseCoordinator
from colonnade.catalog.catalog import Catalog
from colonnade.contracts.model import Contract
from colonnade.store import migrate_engine
from colonnade.store.commit_tokens_repo import CommitTokenStore
from colonnade.store.idempotency_repo import IdempotencyStore
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

    async def call(self, tool: str, fault: str = "ok", **kwargs: Any) -> CallResult:
        """Call `chaos:faults:<tool>`; `constraints` and envelope fields may be given as keywords."""
        arguments = dict(kwargs.pop("input", {}))
        if fault != "ok":
            arguments["fault"] = fault
        constraints = kwargs.pop("constraints", CallConstraints())
        return await self.service.call(
            CallRequest(tool_id=f"chaos:faults:{tool}", input=arguments, constraints=constraints, **kwargs)
        )

    def ledger(self) -> list[dict[str, Any]]:
        entries: list[dict[str, Any]] = httpx2.get(f"{self.fault_url}/ledger").json()["ledger"]
        return entries


def quick_retries(attempts: int = 3) -> RetryPolicy:
    return RetryPolicy(max_attempts=attempts, base_ms=5, cap_ms=20, jitter="full")


async def build_harness(
    engine: AsyncEngine, fault_url: str, *, window_ms: int = 60_000
) -> tuple[Harness, HttpAdapter]:
    catalog = Catalog()
    catalog.publish(Contract.model_validate(fault_contract(fault_url, window_ms=window_ms)))
    http = HttpAdapter()
    coordinator = TwoPhaseCoordinator(catalog, CommitTokenStore(engine))
    health = HealthMonitor(interval_s=0.05)
    pipeline = build_pipeline(
        PipelineParts(http=http, idempotency=IdempotencyStore(engine), two_phase=coordinator, health=health)
    )
    service = CallService(catalog, pipeline, two_phase=coordinator)
    return Harness(service, catalog, coordinator, health, fault_url, engine), http


@pytest.fixture
async def harness(empty_engine: AsyncEngine, fault_url: str) -> AsyncIterator[Harness]:
    await migrate_engine(empty_engine)
    httpx2.post(f"{fault_url}/reset")
    httpx2.post(f"{fault_url}/health/up")
    built, http = await build_harness(empty_engine, fault_url)
    yield built
    await http.aclose()
    await built.health.aclose()
