"""What does Colonnade add to a call of a downstream MCP server?

A trivial `echo` tool on an upstream Streamable HTTP server (the `mcp` SDK, `bench/echo_upstream.py`)
is called with the official `mcp.Client`:
(a) on the upstream directly;
(b) through Colonnade's aggregate endpoint `/mcp` (`default__echo__echo`, the whole call pipeline);
(c) through Colonnade's own endpoint for that server, `/servers/echo/mcp` (original name, pipeline).
Each in both protocol eras (2026-07-28 and the 2025-11-25 handshake era). Median and p99 of sequential
calls, taken in `--rounds` rounds of (a), (b), (c) one after the other so that the added latency is a
difference paired per round; calls/s at 8 and 32 concurrent callers; and, where /proc exists, the
CPU per call of the gateway process and of the upstream process in the same rounds, and their ratio
(the machine is noisy: the ratio moves less than either). The client's own cost is in every row, so
compare rows.

`--baseline DIR` runs a second gateway from the source tree of another checkout (`DIR/src`, e.g. a
`git worktree` of main) against the same upstream, and interleaves its paths (b0), (c0) with the
others in every round: an A/B of two versions in one run.

`--floor` adds the floor under the gateway (`bench/mcp_floor.py`, same uvicorn and aiohttp) in the
same rounds: (f) a bare MCP forwarder, no guarantees; (g) the same forwarder plus the per-call work
the guarantees the benchmark's gateway gives cannot do without (a durable audit record before the
answer, the typed envelope rendered into the answer's `_meta`; the gateway runs without
authentication here, so the floor does too). Their CPU per call beside the gateway's, each as a
ratio to the upstream's CPU in the same round, reads as: what the stack costs, what the
guarantees cost, and what the gateway spends beyond both.

`--peer fastmcp` adds another proxy in front of the same upstream, in the same rounds: (p) FastMCP's
proxy (`bench/peer_fastmcp.py`: a reused upstream session, Streamable HTTP, no auth), run from its own
venv at a pinned version (`bench/peers.py install fastmcp`; never a project dependency). Its process
CPU per call is measured like the gateway's, and each era ends with the gateway's CPU per call over
the peer's, paired per round (issue 15: at most a third of the best peer's).

Run: .venv/bin/python bench/federation_overhead.py [--calls 1000] [--rounds 3] [--baseline DIR] [--floor]
     [--peer fastmcp]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.metadata
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx2
import yaml
from mcp import Client
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _stack import COLONNADE, Call, cpu_seconds, free_port, percentile, sequential, throughput, wait_http
from peers import PEERS, Peer, PeerMissing, installed_version, require

HERE = Path(__file__).resolve().parent
ERAS = (("2026-07-28", "auto"), ("2025-11-25", "legacy"))
_LAUNCH = "import sys; from colonnade.cli import main; sys.argv[0] = 'colonnade'; main()"


@dataclass(frozen=True)
class Gateway:
    url: str
    pid: int


@dataclass(frozen=True)
class Federation:
    upstream: str
    upstream_pid: int
    gateway: Gateway
    baseline: Gateway | None
    floors: tuple[Gateway, Gateway] | None = None
    """The bare forwarder and the forwarder with the guarantees (`--floor`), their `/mcp` URLs."""
    peer: tuple[Peer, Gateway] | None = None
    """Another proxy in front of the same upstream (`--peer`), its `/mcp` URL."""


FLOOR_GUARANTEES = "audit,envelope"


@contextlib.contextmanager
def federation(baseline: Path | None, floor: bool = False, peer: Peer | None = None) -> Iterator[Federation]:
    """The echo upstream and a gateway (two with a baseline) with it as their only server, as processes;
    the floors and a peer proxy in front of the same upstream when asked for."""
    with tempfile.TemporaryDirectory(prefix="colonnade-bench-") as name, contextlib.ExitStack() as logs:
        tmp = Path(name)
        upstream_port = free_port()
        upstream = f"http://127.0.0.1:{upstream_port}/mcp"
        processes: list[subprocess.Popen[bytes]] = []

        def gateway(label: str, command: list[str], pythonpath: Path | None) -> Gateway:
            home = tmp / label
            home.mkdir()
            config = {
                "data_dir": str(home / "data"),
                "servers": [{"name": "echo", "transport": "http", "url": upstream}],
            }
            (home / "colonnade.yaml").write_text(yaml.safe_dump(config))
            env = {k: v for k, v in os.environ.items() if not k.startswith("COLONNADE_")}
            if pythonpath is not None:
                env["PYTHONPATH"] = str(pythonpath)
            port = free_port()
            processes.append(  # the gateway logs one line per call: to a file, not the terminal
                subprocess.Popen(
                    [*command, "serve", "--port", str(port)],
                    cwd=home,
                    env=env,
                    stdout=logs.enter_context((home / "gateway.log").open("wb")),
                    stderr=subprocess.STDOUT,
                )
            )
            url = f"http://127.0.0.1:{port}"
            wait_http(f"{url}/readyz", processes[-1], timeout=180)
            while httpx2.get(f"{url}/v1/servers/echo", timeout=5).json().get("state") != "ready":
                time.sleep(0.1)
            return Gateway(url, processes[-1].pid)

        try:
            processes.append(
                subprocess.Popen(
                    [sys.executable, str(HERE / "echo_upstream.py"), "--port", str(upstream_port)],
                    stdout=logs.enter_context((tmp / "upstream.log").open("wb")),
                    stderr=subprocess.STDOUT,
                )
            )
            upstream_pid = processes[-1].pid
            wait_http(upstream, processes[-1], any_answer=True)
            ours = gateway("gateway", [str(COLONNADE)], None)
            theirs = (
                gateway("baseline", [sys.executable, "-c", _LAUNCH], baseline / "src")
                if baseline is not None
                else None
            )

            def floor_of(label: str, guarantees: str) -> Gateway:
                home = tmp / label
                home.mkdir()
                port = free_port()
                command = [
                    sys.executable,
                    str(HERE / "mcp_floor.py"),
                    "--port",
                    str(port),
                    "--upstream",
                    upstream,
                ]
                if guarantees:
                    command += ["--guarantees", guarantees, "--data-dir", str(home / "data")]
                processes.append(
                    subprocess.Popen(
                        command,
                        stdout=logs.enter_context((home / "floor.log").open("wb")),
                        stderr=subprocess.STDOUT,
                    )
                )
                wait_http(f"http://127.0.0.1:{port}/readyz", processes[-1], timeout=60)
                return Gateway(f"http://127.0.0.1:{port}", processes[-1].pid)

            floors = (
                (floor_of("floor", ""), floor_of("floor-guarantees", FLOOR_GUARANTEES)) if floor else None
            )

            def peer_of(peer: Peer) -> tuple[Peer, Gateway]:
                port = free_port()
                processes.append(
                    subprocess.Popen(
                        peer.command(port, upstream),
                        stdout=logs.enter_context((tmp / f"peer-{peer.name}.log").open("wb")),
                        stderr=subprocess.STDOUT,
                    )
                )
                wait_http(f"http://127.0.0.1:{port}/mcp", processes[-1], timeout=60, any_answer=True)
                return peer, Gateway(f"http://127.0.0.1:{port}", processes[-1].pid)

            yield Federation(
                upstream, upstream_pid, ours, theirs, floors, peer_of(peer) if peer is not None else None
            )
        finally:
            for process in reversed(processes):
                process.terminate()
                process.wait(timeout=10)


@dataclass(frozen=True)
class Measured:
    label: str
    call: Call
    gateway_pid: int | None


@dataclass(frozen=True)
class Row:
    label: str
    median: float
    p99: float
    c8: float
    c32: float
    gateway_cpu: float | None
    upstream_cpu: float | None
    ratio: float | None


def _caller(client: Client, tool: str) -> Call:
    async def call() -> None:
        result = await client.call_tool(tool, {"text": "ping"})
        if result.is_error:
            raise SystemExit(f"{tool} answered an error: {result.content}")

    return call


def _mean(values: list[float]) -> float | None:
    return statistics.mean(values) if values else None


@dataclass(frozen=True)
class Era:
    rows: list[Row]
    added: dict[str, float]
    """Median added latency over (a) by path tag, e.g. `(b)`, paired per round."""
    cpu: dict[str, list[float]]
    """The proxy's CPU ms per call in each round, by path tag (paths through a proxy only)."""
    unserved: str | None = None
    """Why the peer serves no path in this era, when it could not be connected."""


def _tag(label: str) -> str:
    return label.split(")")[0] + ")"


def peer_label(peer: Peer) -> str:
    return f"(p) {peer.label} {peer.version} proxy"


async def _era(stack: Federation, mode: str, calls: int, rounds: int) -> Era:
    unserved: str | None = None
    async with contextlib.AsyncExitStack() as clients:

        async def client(url: str) -> Client:
            return await clients.enter_async_context(Client(url, mode=mode))

        gateways = [("", stack.gateway)] + ([("0", stack.baseline)] if stack.baseline is not None else [])
        paths = [Measured("(a) upstream direct", _caller(await client(stack.upstream), "echo"), None)]
        for suffix, gateway in gateways:
            aggregate = await client(f"{gateway.url}/mcp")
            own = await client(f"{gateway.url}/servers/echo/mcp")
            tag = " (baseline)" if suffix else ""
            paths.append(
                Measured(
                    f"(b{suffix}) Colonnade /mcp{tag}", _caller(aggregate, "default__echo__echo"), gateway.pid
                )
            )
            paths.append(
                Measured(f"(c{suffix}) Colonnade /servers/echo/mcp{tag}", _caller(own, "echo"), gateway.pid)
            )
        if stack.floors is not None:
            bare, guaranteed = stack.floors
            paths.append(
                Measured(
                    "(f) floor: bare MCP forwarder",
                    _caller(await client(f"{bare.url}/mcp"), "echo"),
                    bare.pid,
                )
            )
            paths.append(
                Measured(
                    f"(g) floor + {FLOOR_GUARANTEES.replace(',', ', ')}",
                    _caller(await client(f"{guaranteed.url}/mcp"), "echo"),
                    guaranteed.pid,
                )
            )
        if stack.peer is not None:
            peer, process = stack.peer
            try:  # a peer that cannot serve this era is reported, not measured in another one
                connected = await client(f"{process.url}/mcp")
            except Exception as error:
                unserved = f"{peer.label} {peer.version} does not serve this era: {error!r}"
            else:
                paths.append(Measured(peer_label(peer), _caller(connected, "echo"), process.pid))
        paths.sort(key=lambda path: path.label)
        samples: list[list[float]] = [[] for _ in paths]
        medians: list[list[float]] = [[] for _ in paths]
        gateway_cpu: list[list[float]] = [[] for _ in paths]
        upstream_cpu: list[list[float]] = [[] for _ in paths]
        ratios: list[list[float]] = [[] for _ in paths]
        measured = calls + min(50, calls)  # `sequential` warms up with up to 50 calls
        for _ in range(rounds):
            for index, path in enumerate(paths):
                pids = (path.gateway_pid, stack.upstream_pid)
                before = [cpu_seconds(pid) if pid is not None else None for pid in pids]
                taken = await sequential(path.call, calls)
                after = [cpu_seconds(pid) if pid is not None else None for pid in pids]
                samples[index] += taken
                medians[index].append(statistics.median(taken))
                spent = [
                    (b - a) * 1000 / measured if a is not None and b is not None else None
                    for a, b in zip(before, after, strict=True)
                ]
                if spent[1] is not None:
                    upstream_cpu[index].append(spent[1])
                if spent[0] is not None:
                    gateway_cpu[index].append(spent[0])
                    if spent[1]:
                        ratios[index].append(spent[0] / spent[1])
        rows: list[Row] = []
        for index, path in enumerate(paths):
            rows.append(
                Row(
                    path.label,
                    statistics.median(medians[index]),
                    percentile(samples[index], 0.99),
                    await throughput(path.call, 8, calls),
                    await throughput(path.call, 32, calls),
                    _mean(gateway_cpu[index]),
                    _mean(upstream_cpu[index]),
                    statistics.median(ratios[index]) if ratios[index] else None,
                )
            )
    added = {
        _tag(path.label): statistics.median([b - a for a, b in zip(medians[0], medians[index], strict=True)])
        for index, path in enumerate(paths)
        if index
    }
    cpu = {_tag(path.label): gateway_cpu[index] for index, path in enumerate(paths) if gateway_cpu[index]}
    return Era(rows, added, cpu, unserved)


def peer_ratios(era: Era, peer_tag: str = "(p)") -> dict[str, float]:
    """Each gateway path's CPU per call over the peer's, the median of the per-round ratios."""
    theirs = era.cpu.get(peer_tag)
    if not theirs:
        return {}
    return {
        tag: statistics.median(ours / peer for ours, peer in zip(mine, theirs, strict=True) if peer)
        for tag, mine in era.cpu.items()
        if tag.startswith(("(b", "(c"))
    }


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _peer_lines(version: str, era: Era, peer: Peer) -> list[str]:
    """The issue-15 lines of an era: the gateway's CPU per call over the peer's, and latency added."""
    if era.unserved is not None:
        return [f"{version}: {era.unserved}"]
    lines = [
        f"{version}: gateway CPU per call / {peer.label} CPU per call = {ratio:.2f} for {tag} "
        "(target <= 0.33; median of the per-round ratios)"
        for tag, ratio in peer_ratios(era).items()
    ]
    added = ", ".join(
        f"{tag} {ms:+.3f} ms" for tag, ms in era.added.items() if tag.startswith(("(b", "(c", "(p"))
    )
    lines.append(
        f"{version}: median latency added over (a) the direct call: {added} "
        "(target for the gateway: < 1.5 ms)"
    )
    return lines


async def main(
    calls: int, rounds: int, baseline: Path | None, floor: bool = False, peer: Peer | None = None
) -> None:
    console = Console(width=None if sys.stdout.isatty() else 170)
    if peer is not None:
        pins = ", ".join(peer.requirements)
        sdks = (
            f"its mcp SDK {installed_version(peer, 'mcp')}, the gateway's {importlib.metadata.version('mcp')}"
        )
        console.print(
            f"peer (p): {peer.label} {peer.version} from {peer.venv} ({pins}; {sdks}), {peer.server.name}: "
            "one reused upstream session per era, Streamable HTTP, JSON answers, no auth\n"
        )
    with federation(baseline, floor, peer) as stack:
        for version, mode in ERAS:
            era = await _era(stack, mode, calls, rounds)
            rows, added = era.rows, era.added
            table = Table(
                title=f"{version}: {rounds} x {calls} sequential echo calls (median of the rounds' medians), "
                f"then {calls} calls at 8 and 32 callers"
            )
            columns = (
                "path",
                "median ms",
                "p99 ms",
                "calls/s @8",
                "calls/s @32",
                "gateway CPU ms/call",
                "upstream CPU ms/call",
                "gateway/upstream CPU",
            )
            for column in columns:
                table.add_column(column, justify="left" if column == "path" else "right")
            for row in rows:
                ratio = "-" if row.ratio is None else f"{row.ratio:.2f}x"
                table.add_row(
                    row.label,
                    f"{row.median:.3f}",
                    f"{row.p99:.3f}",
                    f"{row.c8:.0f}",
                    f"{row.c32:.0f}",
                    _ms(row.gateway_cpu),
                    _ms(row.upstream_cpu),
                    ratio,
                )
            console.print(table)
            paired = ", ".join(f"{path} {ms:.3f} ms" for path, ms in added.items())
            console.print(
                f"{version}: median added by the gateway (paired per round): {paired} "
                "(targets: < 1.5 ms added, <= 1.0 ms gateway CPU)\n"
            )
            if peer is not None:
                for line in _peer_lines(version, era, peer):
                    console.print(line)
                console.print()


def parse_arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, checked: a `--peer` must be installed at its pinned version (it is never
    installed from here)."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=1000, help="calls per measurement (default 1000)")
    parser.add_argument(
        "--rounds", type=int, default=3, help="rounds of sequential (a), (b), (c) (default 3)"
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        help="a checkout of another version (its src/ is run) to measure as (b0), (c0) in the same rounds",
    )
    parser.add_argument(
        "--floor",
        action="store_true",
        help="also measure the floor (bench/mcp_floor.py): (f) a bare forwarder, (g) plus audit, envelope",
    )
    parser.add_argument(
        "--peer",
        choices=sorted(PEERS),
        help="also measure a peer proxy in front of the same upstream as (p), from its own pinned venv "
        "(install it first: .venv/bin/python bench/peers.py install NAME)",
    )
    arguments = parser.parse_args(argv)
    if arguments.calls < 1 or arguments.rounds < 1:
        parser.error("--calls and --rounds must be at least 1")
    if arguments.baseline is not None and not (arguments.baseline / "src" / "colonnade").is_dir():
        parser.error(f"--baseline {arguments.baseline} has no src/colonnade")
    arguments.peer = None if arguments.peer is None else PEERS[arguments.peer]
    if arguments.peer is not None:
        try:
            require(arguments.peer)
        except PeerMissing as missing:
            parser.error(str(missing))
    return arguments


if __name__ == "__main__":
    arguments = parse_arguments()
    asyncio.run(main(arguments.calls, arguments.rounds, arguments.baseline, arguments.floor, arguments.peer))
