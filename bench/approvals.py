"""What does the approval workflow cost the gateway per call?

Three steps, on a SQLite file (the embedded default): parking a call that needs approval (the
parked call and the approval row, as the gate does), approving it (signing the ES256 token and
the compare-and-set), and redeeming the token when the call is retried (verifying the signature,
checking the binding, spending it). Signing and verifying alone are measured too. Each step runs
`--calls` times per round; the table shows the median round's microseconds per operation (wall
and this process's CPU). Humans take minutes to decide, so none of this is on a hot path; the
numbers say what an approval adds to the two calls it touches.

Run: .venv/bin/python bench/approvals.py [--calls 300] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import yaml
from rich.console import Console
from rich.table import Table

from colonnade.calls.approvals import ApprovalCoordinator, ApprovalDesk, ApprovalSigner
from colonnade.calls.call import Call
from colonnade.calls.envelope import CallRequest
from colonnade.calls.manifest import Manifests
from colonnade.calls.parking import ParkedCalls
from colonnade.catalog.catalog import Catalog
from colonnade.contracts.model import Contract
from colonnade.governance.personas import PERSONA_SCOPES, Persona
from colonnade.governance.principal import Principal, PrincipalKind
from colonnade.store import create_store_engine, migrate_engine
from colonnade.store.approvals_repo import ApprovalStore
from colonnade.store.parked_calls_repo import ParkedCallStore

BILLING = Path(__file__).resolve().parents[1] / "examples" / "contracts" / "billing.yaml"

ADMIN = PERSONA_SCOPES[Persona.ADMIN]
ALICE = Principal(PrincipalKind.USER, "alice", tenant="acme", persona="admin", scopes=ADMIN)
BOB = Principal(PrincipalKind.USER, "bob", tenant="acme", persona="admin", scopes=ADMIN)


async def _timed(n: int, step: Callable[[int], Awaitable[object]]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    for i in range(n):
        await step(i)
    return (time.perf_counter() - wall) / n * 1e6, (time.process_time() - cpu) / n * 1e6


async def _round(directory: Path, calls: int) -> dict[str, tuple[float, float]]:
    engine = create_store_engine(f"sqlite+aiosqlite:///{directory / 'bench.db'}")
    await migrate_engine(engine)
    signer = ApprovalSigner.load_or_create(directory / "approval.jwk")
    desk = ApprovalDesk(ApprovalStore(engine), signer)
    coordinator = ApprovalCoordinator(desk, ParkedCalls(ParkedCallStore(engine)), request_ttl_s=3600)
    catalog = Catalog()
    catalog.publish(Contract.model_validate(yaml.safe_load(BILLING.read_text(encoding="utf-8"))))
    tool = catalog.get("acme:billing:void_invoice")
    assert tool is not None
    manifest = Manifests().for_tool(tool)
    parked: list[Call] = []
    ids: list[str] = []
    tokens: list[str] = []

    async def park(i: int) -> None:
        call = Call.start(
            CallRequest(tool_id=tool.canonical_name, input={"invoice_id": f"INV-{i}", "reason": "bench"}),
            tool,
            manifest,
        )
        call = call.evolve(principal=ALICE)
        result = await coordinator.park(call)
        assert result.pending is not None
        parked.append(call)
        ids.append(result.pending.token)

    async def approve(i: int) -> None:
        record = await desk.approve(BOB, ids[i])
        assert record.token is not None
        tokens.append(record.token)

    async def redeem(i: int) -> None:
        assert await coordinator.redeem(parked[i], tokens[i]) is None

    results = {
        "park (parked call + approval row)": await _timed(calls, park),
        "approve (sign + compare-and-set)": await _timed(calls, approve),
        "redeem (verify + bind + spend)": await _timed(calls, redeem),
    }
    sample = signer.verify(tokens[0])

    async def sign(i: int) -> None:
        signer.sign(sample)

    async def verify(i: int) -> None:
        signer.verify(tokens[i])

    results["sign token (ES256)"] = await _timed(calls, sign)
    results["verify token (ES256)"] = await _timed(calls, verify)
    await engine.dispose()
    return results


async def main(calls: int, rounds: int) -> None:
    collected: dict[str, list[tuple[float, float]]] = {}
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as folder:
            for name, value in (await _round(Path(folder), calls)).items():
                collected.setdefault(name, []).append(value)
    table = Table("step", "wall µs / op (median round)", "CPU µs / op")
    for name, values in collected.items():
        wall = statistics.median(value[0] for value in values)
        cpu = statistics.median(value[1] for value in values)
        table.add_row(name, f"{wall:,.0f}", f"{cpu:,.0f}")
    Console().print(table)
    Console().print(f"{calls} operations per step and round, {rounds} rounds, SQLite file")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.calls, arguments.rounds))
