"""What the Rego policy gate costs: one decision, and the whole governance path of a call.

Part 1 times one decision of the same policy set (the shipped policies, the business-hours
example and a user rule) four ways: an interpreted query, a compiled bundle fed JSON text, a
compiled bundle fed regopy's `Input` object (the gateway's way until the native input), and the
bundle fed the input written natively (`policy.native`, GIL held; what the gateway uses), plus
the full `PolicyGate.decide` (the principal's and tool's part recorded once, arguments and time
per call). A decision right after the previous one finds its code and data in the CPU's caches;
a gateway's does not (its call does other work in between, and time passes). So
`PolicyGate.decide` is timed again after each of the `--gap-ms` busy-waits, which touch no
memory (what a decision costs once its caches cooled), the gaps taking turns with decisions
right after one another; and step by step (write the ops, the C calls that build the input,
`set_input`, the query, reading the output), right after a decision and after the longest gap.

Part 2 calls a read tool of the demo backend (a child process on loopback) through gateways built
the production way (`Gateway.open`: SQLite, audit log, full pipeline): without the policy gate,
with its stages but a fixed decision (the control: what the stages cost without Rego), with the
shipped policy, with the shipped policy, the business-hours example and a user rule, and with
that same set decided the former way (input document, regopy `Input`, query). They
take turns call by call, so that all see the same machine; the difference of the medians is
what the policy gate adds to a call (wall time, and CPU of the gateway's thread, which a loaded machine
disturbs less). The decisions of the last two gateways are timed where they run, too; after the
A/B, the gateway with policy serves as many calls alone (no other gateway's call between two of
its own), its decisions timed again.

Run: .venv/bin/python bench/policy_eval.py [--decisions 5000] [--calls 2000] [--gap-ms 1 5 20]
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import yaml
from regopy import Input
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _stack import ROOT, free_port, wait_http

from colonnade.calls.envelope import CallRequest
from colonnade.config import PolicySettings, Settings
from colonnade.governance.policy import native
from colonnade.governance.policy.decision import PolicyDecision
from colonnade.governance.policy.engine import CompiledPolicy, interpreter_with
from colonnade.governance.policy.framing import DECISION_ENTRYPOINT, DECISION_QUERY, OBLIGATION_RULES
from colonnade.governance.policy.gate import PolicyGate
from colonnade.governance.policy.input_document import policy_input
from colonnade.governance.policy.sources import SHIPPED_POLICIES, PolicySet
from colonnade.governance.principal import Principal, PrincipalKind
from colonnade.observability.logging import configure_logging
from colonnade.runtime.gateway import Gateway

TOOL = "acme:crm:get_customer"
AGENT = Principal(PrincipalKind.AGENT, "bench-bot", tenant="acme", persona="agent")
ARGUMENTS = {"customer_id": "C-1001"}
"""The arguments of every decision and call here: the loop decides the gateway's input."""
USER_RULE = """package colonnade.policy

import rego.v1

deny contains "refunds above 1000 need a ticket" if {
	input.tool.operation == "refund_invoice"
	input.arguments.amount > 1000
}

redact_output_fields contains "email" if input.tool.operation == "get_customer"
"""


def _timed(work: Callable[[], object], n: int) -> tuple[list[float], list[float]]:
    """Wall and thread CPU times of `n` runs, in ms."""
    samples, cpu = [], []
    for _ in range(n):
        started, cpu_started = time.perf_counter(), time.thread_time()
        work()
        samples.append((time.perf_counter() - started) * 1000)
        cpu.append((time.thread_time() - cpu_started) * 1000)
    return samples, cpu


def _after_gaps(
    work: Callable[[], object], n: int, gaps_ms: Sequence[float]
) -> dict[float, tuple[list[float], list[float]]]:
    """(wall, CPU) in ms of `n` runs per gap, each run after that many ms of busy-waiting that
    touches no memory (0: right after the previous run); the gaps take turns in a shuffled order,
    so that all see the same machine."""
    times: dict[float, tuple[list[float], list[float]]] = {gap: ([], []) for gap in gaps_ms}
    order = list(gaps_ms)
    for _ in range(n):
        random.shuffle(order)
        for gap in order:
            _busy_wait(gap)
            started, cpu_started = time.perf_counter(), time.thread_time()
            work()
            times[gap][0].append((time.perf_counter() - started) * 1000)
            times[gap][1].append((time.thread_time() - cpu_started) * 1000)
    return times


def _busy_wait(ms: float) -> None:
    deadline = time.perf_counter() + ms / 1000
    while time.perf_counter() < deadline:
        pass


def _steps(gate: PolicyGate, tool: Any, n: int, gap_ms: float, console: Console) -> None:
    """CPU of each step of `PolicyGate.decide`, right after a decision and `gap_ms` after one."""
    loaded = gate._loaded
    assert loaded is not None
    interpreter, bundle = loaded.policy._rego._impl, loaded.policy._bundle._impl
    names = ("write the ops (Python)", "build the input (C calls)", "set_input", "query", "read the output")
    cpu: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in names}

    def decide(cold: int) -> None:
        clock = [time.thread_time_ns()]
        ops = loaded.inputs.ops(AGENT, tool, ARGUMENTS)
        clock.append(time.thread_time_ns())
        handle = native._new_input()
        for function, arguments in ops:
            function(handle, *arguments)
        clock.append(time.thread_time_ns())
        native._set_input(interpreter, handle)
        native._free_input(handle)
        clock.append(time.thread_time_ns())
        output = native._query_entrypoint(interpreter, bundle, DECISION_ENTRYPOINT.encode())
        clock.append(time.thread_time_ns())
        size = native._output_size(output)
        buffer = ctypes.create_string_buffer(size)
        native._output_json(output, buffer, size)
        native._free_output(output)
        json.loads(buffer.value)
        clock.append(time.thread_time_ns())
        for name, before, after in zip(names, clock, clock[1:], strict=False):
            cpu[name][cold].append((after - before) / 1e6)

    for _ in range(n):
        _busy_wait(gap_ms)
        decide(1)
        decide(0)
    calls = len(loaded.inputs.ops(AGENT, tool, ARGUMENTS))
    table = Table(title=f"PolicyGate.decide step by step ({calls} C calls build the input), CPU median ms")
    for column in ("step", "right after a decision", f"{gap_ms:g} ms after one", "ratio"):
        table.add_column(column, justify="left" if column == "step" else "right")
    for name in names:
        warm, cold = statistics.median(cpu[name][0]), statistics.median(cpu[name][1])
        table.add_row(name, f"{warm:.4f}", f"{cold:.4f}", f"{cold / warm:.2f}")
    console.print(table)


def _row(table: Table, label: str, samples: list[float], cpu: list[float] | None = None) -> None:
    ordered = sorted(samples)
    p95 = ordered[int(len(ordered) * 0.95) - 1]
    cells = [label, f"{statistics.median(ordered):.3f}", f"{p95:.3f}", str(len(ordered))]
    if cpu is not None:
        cells.append(f"{statistics.median(cpu):.3f}")
    table.add_row(*cells)


def _decisions(n: int, user_dir: Path, console: Console, gaps_ms: Sequence[float]) -> None:
    directories = (SHIPPED_POLICIES, SHIPPED_POLICIES / "examples", user_dir)
    policy_set = PolicySet.read(directories)
    gate = PolicyGate(directories, time_zones={"acme": "Europe/Paris"}, isolate=False)
    assert gate.load()
    tool = _demo_tool()
    document = policy_input(AGENT, tool, ARGUMENTS, time_zones={"acme": "Europe/Paris"})
    interpreted = interpreter_with(policy_set.policies, {})
    compiled = CompiledPolicy(policy_set)
    text = json.dumps(document)
    json_bundle = interpreter_with(policy_set.policies, {})
    bundle = json_bundle.build(DECISION_QUERY)
    regopy_input = _regopy_decide(policy_set, {})

    def query() -> object:
        interpreted.set_input(Input(document))
        return interpreted.query(DECISION_QUERY)

    def bundle_json() -> object:
        json_bundle.set_input_term(text)
        return json_bundle.query_bundle(bundle)

    table = Table(title=f"one policy decision ({len(policy_set.policies)} policy files), ms")
    for column in ("way", "median", "p95", "n", "CPU median"):
        table.add_column(column, justify="left" if column == "way" else "right")
    _row(table, "interpreted query", *_timed(query, max(200, n // 10)))
    _row(table, "bundle, input as JSON text", *_timed(bundle_json, n))
    _row(table, "bundle, regopy Input object (before)", *_timed(lambda: regopy_input(document), n))
    _row(table, "bundle, native input (used)", *_timed(lambda: compiled.evaluate(document), n))
    decide = lambda: gate.decide(AGENT, tool, ARGUMENTS)  # noqa: E731
    _row(table, "PolicyGate.decide (recorded + native)", *_timed(decide, n))
    gaps = (0.0, *gaps_ms)
    for gap, times in _after_gaps(decide, max(200, n // (2 * len(gaps))), gaps).items():
        _row(table, f"PolicyGate.decide, {gap:g} ms after the last (in turns)", *times)
    console.print(table)
    _steps(gate, tool, max(200, n // 10), max(gaps_ms), console)


def _demo_tool() -> Any:
    from colonnade.catalog.catalog import Catalog
    from colonnade.contracts.model import Contract

    catalog = Catalog()
    catalog.publish(
        Contract.model_validate(yaml.safe_load((ROOT / "examples/contracts/crm.yaml").read_text()))
    )
    return catalog.get(TOOL)


async def _gateways(calls: int, tmp: Path, backend_url: str, user_dir: Path, console: Console) -> None:
    contracts = []
    for src in sorted((ROOT / "examples" / "contracts").glob("*.yaml")):
        data = yaml.safe_load(src.read_text())
        data["backend"]["base_url"] = backend_url
        (tmp / src.name).write_text(yaml.safe_dump(data, sort_keys=False))
        contracts.append(tmp / src.name)
    directories = [SHIPPED_POLICIES / "examples", user_dir]
    with_policy = PolicySettings(builtin=True, directories=directories, time_zones={"acme": "Europe/Paris"})
    shipped = PolicySettings(builtin=True)
    gateways = {
        "without policy": await Gateway.open(
            Settings(data_dir=tmp / "a", contracts=contracts, policy=PolicySettings(enabled=False))
        ),
        "policy stages, fixed decision (no Rego)": _fixed(
            await Gateway.open(Settings(data_dir=tmp / "d", contracts=contracts, policy=shipped))
        ),
        "with the shipped policy only": await Gateway.open(
            Settings(data_dir=tmp / "c", contracts=contracts, policy=shipped)
        ),
        "with policy": await Gateway.open(
            Settings(data_dir=tmp / "b", contracts=contracts, policy=with_policy)
        ),
        "with policy, decided the former way": _former(
            await Gateway.open(Settings(data_dir=tmp / "e", contracts=contracts, policy=with_policy))
        ),
    }
    samples: dict[str, list[float]] = {label: [] for label in gateways}
    cpu: dict[str, list[float]] = {label: [] for label in gateways}
    inside = _time_decisions(gateways["with policy"])
    inside_former = _time_decisions(gateways["with policy, decided the former way"])
    try:
        labels = list(gateways)
        for round_ in range(calls + 50):
            random.shuffle(labels)
            for label in labels:
                request = CallRequest(tool_id=TOOL, input=dict(ARGUMENTS))
                started, cpu_started = time.perf_counter(), time.thread_time()
                result = await gateways[label].calls.call(request, AGENT)
                elapsed = (time.perf_counter() - started) * 1000
                used = (time.thread_time() - cpu_started) * 1000
                assert result.status.value == "success", result
                if round_ >= 50:  # the first rounds warm up connections and caches
                    samples[label].append(elapsed)
                    cpu[label].append(used)
        in_turns = (inside[0][-calls:], inside[1][-calls:])
        del inside[0][:], inside[1][:]
        alone = gateways["with policy"]
        for _ in range(calls):
            result = await alone.calls.call(CallRequest(tool_id=TOOL, input=dict(ARGUMENTS)), AGENT)
            assert result.status.value == "success", result
    finally:
        for gateway in gateways.values():
            await gateway.aclose()
    table = Table(title=f"whole call through the gateway ({TOOL}, SQLite audit), ms")
    for column in ("gateway", "median", "p95", "n", "CPU median"):
        table.add_column(column, justify="left" if column == "gateway" else "right")
    for label, values in samples.items():
        _row(table, label, values, cpu[label])
    _row(table, "(of which PolicyGate.decide, in the gateway)", *in_turns)
    former, former_cpu = inside_former
    _row(table, "(of which the former decide, in the gateway)", former[-calls:], former_cpu[-calls:])
    _row(table, "(of which PolicyGate.decide, that gateway alone)", *inside)
    console.print(table)
    base, base_cpu = statistics.median(samples["without policy"]), statistics.median(cpu["without policy"])
    for label in ("with the shipped policy only", "with policy", "with policy, decided the former way"):
        added = statistics.median(samples[label]) - base
        added_cpu = statistics.median(cpu[label]) - base_cpu
        console.print(
            f"{label}: the policy stage adds {added:.3f} ms to a call's median, "
            f"{added_cpu:.3f} ms to its CPU (the gateway's thread)"
        )


def _fixed(gateway: Gateway) -> Gateway:
    """The control: the policy, redaction and attestation stages run, but no Rego is evaluated."""
    gate = gateway.governance.policy
    assert gate is not None
    decision = PolicyDecision(str(gate.version))
    gate.decide = lambda *_: decision  # type: ignore[method-assign]
    return gateway


def _regopy_decide(policy_set: PolicySet, data: Any) -> Callable[[dict[str, Any]], PolicyDecision]:
    """The former evaluation: regopy's `Input` (one GIL release per value) and a query bundle."""
    rego = interpreter_with(policy_set.policies, data)
    bundle = rego.build(DECISION_QUERY)

    def decide(document: dict[str, Any]) -> PolicyDecision:
        rego.set_input(Input(document))
        output = rego.query_bundle(bundle)
        value = output.results[0].expressions[0]
        fields = {rule: tuple(sorted(value.get(rule, []))) for rule in OBLIGATION_RULES}
        return PolicyDecision(policy_set.version, **fields)

    return decide


def _former(gateway: Gateway) -> Gateway:
    """The same policy set, decided as before: document, regopy `Input`, query (for the A/B)."""
    gate = gateway.governance.policy
    assert gate is not None
    policy_set = PolicySet.read(gate.directories)
    evaluate = _regopy_decide(policy_set, gate.data)
    zones = gate.time_zones

    def decide(principal: Principal, tool: Any, arguments: Any) -> PolicyDecision:
        return evaluate(policy_input(principal, tool, arguments, time_zones=zones))

    gate.decide = decide  # type: ignore[method-assign]
    return gateway


def _time_decisions(gateway: Gateway) -> tuple[list[float], list[float]]:
    """Wrap the gateway's policy gate so that each decision it takes is timed where it runs
    (wall time, and CPU time of the thread)."""
    gate = gateway.governance.policy
    assert gate is not None
    decide, samples, cpu = gate.decide, [], []

    def timed(*args: Any) -> Any:
        started, cpu_started = time.perf_counter(), time.thread_time()
        try:
            return decide(*args)
        finally:
            samples.append((time.perf_counter() - started) * 1000)
            cpu.append((time.thread_time() - cpu_started) * 1000)

    gate.decide = timed  # type: ignore[method-assign,assignment]
    return samples, cpu


def main(decisions: int, calls: int, gaps_ms: Sequence[float]) -> None:
    configure_logging("warning")
    console = Console()
    with tempfile.TemporaryDirectory(prefix="colonnade-policy-bench-") as name:
        tmp = Path(name)
        user_dir = tmp / "policies"
        user_dir.mkdir()
        (user_dir / "user.rego").write_text(USER_RULE)
        _decisions(decisions, user_dir, console, gaps_ms)
        port = free_port()
        backend = subprocess.Popen(
            [sys.executable, "-m", "examples.demo_backend", "--port", str(port), "--db", str(tmp / "d.db")],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_http(f"http://127.0.0.1:{port}/healthz", backend)
            asyncio.run(_gateways(calls, tmp, f"http://127.0.0.1:{port}", user_dir, console))
        finally:
            backend.terminate()
            backend.wait(timeout=10)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--decisions", type=int, default=5000, help="decisions timed per way")
    parser.add_argument("--calls", type=int, default=2000, help="calls per gateway")
    parser.add_argument(
        "--gap-ms",
        type=float,
        nargs="+",
        default=[1.0, 5.0, 20.0],
        help="busy-waits before a decision of the loop (its caches cool meanwhile)",
    )
    arguments = parser.parse_args()
    main(arguments.decisions, arguments.calls, arguments.gap_ms)
