"""Chaos: `kill -9` of a real gateway process with keyed calls in flight, on SQLite and on PostgreSQL.

A gateway (`colonnade serve` with the fault contract) gets 150 keyed calls at once: 100 payments,
whose backend does not deduplicate, and 50 effects, whose backend does (and says so in the
contract). Once the backend has carried out 40% of them it is killed with SIGKILL (counted at the
backend, not by the answers the test has read: a loaded test process reads answers late, and the
gateway may have finished every call by then), then started again on
the same database, and every key is resent until its answer is definite. No key may have two
effects in the backend's ledger; every success answered before the kill is replayed unchanged; a
payment in flight at the kill ends as `S-TOOL-EFFECT-UNKNOWN`, an effect in flight runs again
(safely, with a warning) and succeeds; while the dead gateway's leases run, resends are answered
`R-CAP-KEY-IN-PROGRESS` at once.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
import yaml
from sqlalchemy import text
from sqlalchemy.engine import make_url

from colonnade.store import create_store_engine
from tests.support.exactly_once import NOT_YET, outcome_of, verify_exactly_once
from tests.support.fault_contract import fault_contract
from tests.support.loopback import free_port, start_process, stop_process, wait_http
from tests.support.machine_load import patient

COLONNADE = Path(sys.executable).with_name("colonnade")
PAYMENTS, EFFECTS = 100, 50
TIMEOUT_MS = 20_000  # the calls' least timeout; the dead gateway's leases end 5 s after it
# A restart must meet the dead gateway's leases still running (seen taking 10-30 s on a loaded 2-core
# machine): the calls' timeout is at least three of the first gateway's measured start-ups.
STARTS_PER_TIMEOUT = 3
KILL_AT = 0.4  # the share of calls the backend has carried out when the gateway is killed
WARM_UP = 10
RESEND_TIMEOUT_MS = 10_000  # resends would wait this long if "in progress" were a wait

Plans = dict[str, tuple[str, dict[str, Any]]]


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def gateway_database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The gateway's database: a SQLite file, or a PostgreSQL database of this test's own."""
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'gateway.db'}"
        return
    server: str = request.getfixturevalue("postgres_url")
    name = f"colonnade_kill_{uuid.uuid4().hex[:12]}"
    asyncio.run(_admin(server, f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(server).set(database=name).render_as_string(hide_password=False)
    finally:
        asyncio.run(_admin(server, f'DROP DATABASE "{name}" WITH (FORCE)'))


async def _admin(server: str, statement: str) -> None:
    engine = create_store_engine(server)
    try:
        async with engine.connect() as conn:
            await (await conn.execution_options(isolation_level="AUTOCOMMIT")).execute(text(statement))
    finally:
        await engine.dispose()


def _plans() -> Plans:
    rng = random.Random(20261124)
    plans: Plans = {}
    # Payments and effects interleaved (two to one), so that both kinds are in flight at the kill
    # whenever it comes: sent all payments first, the payments were once all done by then.
    for n in range(PAYMENTS + EFFECTS):
        tool = "create_effect" if n % 3 == 2 else "create_payment"
        key = f"kill-{tool}-{n}"
        plans[key] = (tool, {"note": key, "fault": f"slow:{rng.randint(0, 700)}"})
    return plans


class Gateway:
    """`colonnade serve` in a child process on a free port."""

    def __init__(self, tmp: Path, database_url: str, contract: Path, name: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = tmp / f"{name}.log"
        env = {
            **os.environ,
            "COLONNADE_DATA_DIR": str(tmp / "data"),
            "COLONNADE_DATABASE_URL": database_url,
            "COLONNADE_CONTRACTS": json.dumps([str(contract)]),
        }
        command = [str(COLONNADE), "serve", "--host", "127.0.0.1", "--port", str(self.port)]
        started = time.monotonic()
        self.proc = start_process(command, self.log, cwd=tmp, env=env)
        wait_http(f"{self.url}/readyz", self.proc, log=self.log)
        self.start_s = time.monotonic() - started


async def _send(
    client: httpx2.AsyncClient, url: str, key: str, plan: tuple[str, dict[str, Any]], timeout_ms: int
) -> dict[str, Any] | None:
    tool, arguments = plan
    request = {
        "tool_id": f"chaos:faults:{tool}",
        "input": arguments,
        "constraints": {
            "idempotency_key": key,
            "timeout_ms": timeout_ms,
            "retry_policy": {"max_attempts": 1},
        },
    }
    try:
        response = await client.post(f"{url}/v1/calls", json=request)
    except httpx2.HTTPError:
        return None  # the gateway died before answering
    answer: dict[str, Any] = response.json()
    return answer


async def _burst_then_kill(
    gateway: Gateway, plans: Plans, fault_url: str, timeout_ms: int
) -> dict[str, dict[str, Any] | None]:
    """Send every call at once; SIGKILL the gateway once the backend has carried out KILL_AT of them."""
    async with httpx2.AsyncClient(timeout=30) as client:
        for n in range(WARM_UP):  # first calls are slow (connections, caches): not what is measured
            await _send(client, gateway.url, f"warm-{n}", ("get_item", {"item_id": "I-1"}), timeout_ms)
        calls = [asyncio.create_task(_send(client, gateway.url, k, p, timeout_ms)) for k, p in plans.items()]
        await _until_carried_out(client, fault_url, KILL_AT * len(plans))
        os.kill(gateway.proc.pid, signal.SIGKILL)
        answers = await asyncio.gather(*calls)
    return dict(zip(plans, answers, strict=True))


async def _until_carried_out(client: httpx2.AsyncClient, fault_url: str, effects: float) -> None:
    """Wait until the backend's ledger holds `effects` entries (each call's effect is its last step)."""
    give_up = time.monotonic() + patient(20)
    while len((await client.get(f"{fault_url}/ledger")).json()["ledger"]) < effects:
        assert time.monotonic() < give_up, f"the backend carried out fewer than {effects:.0f} calls in time"
        await asyncio.sleep(0.01)


async def _resend_until_definite(
    url: str, plans: Plans, leases_s: float
) -> tuple[dict[str, dict[str, Any]], list[float]]:
    """Resend every key, as clients would, until each answer is definite; also how fast "not yet" came."""
    final: dict[str, dict[str, Any]] = {}
    in_progress_s: list[float] = []
    give_up = time.monotonic() + leases_s + patient(35)  # the leases end, then every key settles

    async def resend(client: httpx2.AsyncClient, key: str) -> None:
        started = time.monotonic()
        answer = await _send(client, url, key, plans[key], RESEND_TIMEOUT_MS)
        assert answer is not None, f"no answer to {key} from the restarted gateway"
        if outcome_of(answer) == "R-CAP-KEY-IN-PROGRESS":
            in_progress_s.append(time.monotonic() - started)
        if outcome_of(answer) not in NOT_YET:
            final[key] = answer

    async with httpx2.AsyncClient(timeout=30) as client:
        while pending := [key for key in plans if key not in final]:
            assert time.monotonic() < give_up, f"{len(pending)} keys never got a definite answer"
            await asyncio.gather(*(resend(client, key) for key in pending))
            await asyncio.sleep(0.5)
    return final, in_progress_s


def test_kill_9_with_keyed_calls_in_flight(gateway_database: str, fault_url: str, tmp_path: Path) -> None:
    httpx2.post(f"{fault_url}/reset")
    httpx2.post(f"{fault_url}/health/up")
    contract = tmp_path / "faults.yaml"
    contract.write_text(yaml.safe_dump(fault_contract(fault_url)), encoding="utf-8")
    plans = _plans()
    first_gateway = Gateway(tmp_path, gateway_database, contract, "before-kill")
    timeout_ms = max(TIMEOUT_MS, int(STARTS_PER_TIMEOUT * first_gateway.start_s * 1000))
    try:
        first = asyncio.run(_burst_then_kill(first_gateway, plans, fault_url, timeout_ms))
    finally:
        stop_process(first_gateway.proc)
    second_gateway = Gateway(tmp_path, gateway_database, contract, "after-kill")
    try:
        leases_s = timeout_ms / 1000 + 5
        final, in_progress_s = asyncio.run(_resend_until_definite(second_gateway.url, plans, leases_s))
    finally:
        stop_process(second_gateway.proc)
    ledger = httpx2.get(f"{fault_url}/ledger").json()["ledger"]
    kinds = {key: "payment" if tool == "create_payment" else "effect" for key, (tool, _) in plans.items()}

    tally = verify_exactly_once(first, final, ledger, kinds)
    print(f"\nkill -9 on {make_url(gateway_database).get_backend_name()}: {dict(sorted(tally.items()))}")
    print(f"in-progress answers: {len(in_progress_s)}, slowest {max(in_progress_s, default=0):.3f} s")
    starts = f"{first_gateway.start_s:.1f} s and {second_gateway.start_s:.1f} s"
    print(f"start-ups {starts}; the calls' timeout {timeout_ms} ms")
    assert tally["first: success"] > 0 and tally["first: no answer"] > 0  # the kill hit calls in flight
    assert second_gateway.start_s < leases_s, "the restart came after the dead gateway's leases ended"
    # at once, not after waiting out the 10 s timeout (half of it: 150 resends at once on a busy machine)
    assert in_progress_s and max(in_progress_s) < RESEND_TIMEOUT_MS / 2000
    unknown = {key for key, answer in final.items() if outcome_of(answer) == "S-TOOL-EFFECT-UNKNOWN"}
    assert unknown and all(kinds[key] == "payment" for key in unknown)  # effects ran again, safely
    rerun = {k for k, a in final.items() if any("earlier attempt" in w for w in a["warnings"])}
    print(f"run again after the kill: {len(rerun)} effects (backend deduplicates), payments never")
    assert rerun and all(kinds[key] == "effect" and first[key] is None for key in rerun)
