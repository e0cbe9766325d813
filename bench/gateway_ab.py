"""A/B of gateway CPU per call: gateways running different source trees against one demo backend.

Each variant is a `colonnade serve` process whose PYTHONPATH puts NAME's `src` folder first (for
example an export of `main` made with `git archive main src | tar -x -C /tmp/base`). The demo's
`get_customer` is called over REST (`POST /v1/calls`) and MCP (`tools/call`, 2026-07-28 JSON)
in short blocks; variants and paths take turns block by block, in alternating order, so a shared
machine's drift reaches every variant alike. CPU is read from `/proc/<pid>/task/*/schedstat`
(nanoseconds, every thread), for each gateway and for the backend during that gateway's blocks,
so each variant gets its own gateway/backend ratio from the same run.

With `--floor`, a bare uvicorn-in, aiohttp-out forwarder (`bench/gateway_floor.py`) takes turns
too: the CPU any gateway on this stack pays per call before doing any work of its own.

With `--guarantee-floors`, the forwarder also runs with only the work a guarantee mandates per
call added, done by the gateway's own code (`gateway_floor.py --guarantees`): `fl+audit` commits
the call's audit record before answering (the gateway's store, schema, seal and SQLite settings),
`fl+aud+env` also parses the `CallRequest` envelope and answers a typed `CallResult`; with
`--auth` as well, `fl+aud+env+auth` also authenticates the caller's token at the edge.

With `--auth`, every gateway trusts the development issuer, as `make run` serves the demo, and each
call carries the demo's admin token (tenant acme), minted per gateway.

With `--session`, a third path calls `tools/call` in one 2025-11-25 MCP session per gateway
(`initialize` once, then `Mcp-Session-Id` on each request; the floor is left out then).

Run (two or more NAME=SRC_FOLDER variants):
    .venv/bin/python bench/gateway_ab.py [--calls 50] [--rounds 40] [--floor | --session]
        [--guarantee-floors] [--auth] old=/tmp/b new=src
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import subprocess
import sys
import tempfile
from itertools import count
from pathlib import Path

import httpx2

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _stack import ROOT, backend_command, demo_contracts, free_port, gateway_process, stop_all, wait_http
from call_overhead import _HEADERS, ARGS, TOOL, _mcp_body
from gateway_floor import BENCH_RESOURCE

PATHS = ("rest", "mcp")
SESSION_PATH = "mcp-session"  # a 2025-11-25 client in one session (`--session`)
_SESSION_VERSION = "2025-11-25"
_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": _SESSION_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"},
    },
}


def cpu_ns(pid: int) -> int:
    """CPU nanoseconds every thread of a process has used so far (Linux schedstat)."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        with contextlib.suppress(OSError):
            total += int(Path(f"/proc/{pid}/task/{task}/schedstat").read_text().split()[0])
    return total


Gateway = tuple[str, int, dict[str, str]]
"""A gateway under test: base URL, process id, and the headers every call to it carries."""
GUARANTEE_FLOORS = {"fl+audit": "audit", "fl+aud+env": "audit,envelope"}
AUTH_FLOOR = ("fl+aud+env+auth", "audit,envelope,auth")


def demo_admin_token(data_dir: Path) -> str:
    """The demo's admin token (tenant acme), from the development issuer under `data_dir`."""
    from colonnade.governance.identity.dev_issuer import DevIssuer
    from colonnade.governance.personas import PERSONA_SCOPES, Persona

    claims = {
        "sub": "demo-admin",
        "persona": Persona.ADMIN.value,
        "tenant": "acme",
        "scope": " ".join(sorted(PERSONA_SCOPES[Persona.ADMIN])),
    }
    return DevIssuer.load_or_create(data_dir).mint(claims, audience=BENCH_RESOURCE, ttl_s=12 * 3600)


async def measure(
    gateways: dict[str, Gateway], backend_pid: int, calls: int, rounds: int, paths: tuple[str, ...]
) -> None:
    async with httpx2.AsyncClient() as http:
        ids = count(1)
        sessions: dict[str, str] = {}
        accept = {"accept": "application/json, text/event-stream", "mcp-protocol-version": _SESSION_VERSION}
        if SESSION_PATH in paths:
            for base, _, auth in gateways.values():
                opened = await http.post(f"{base}/mcp", json=_INITIALIZE, headers={**accept, **auth})
                sessions[base] = opened.headers["mcp-session-id"]
                ready = {"jsonrpc": "2.0", "method": "notifications/initialized"}
                await http.post(
                    f"{base}/mcp", json=ready, headers={**accept, **auth, "mcp-session-id": sessions[base]}
                )

        async def call(gateway: Gateway, path: str) -> None:
            base, _, auth = gateway
            if path == "rest":
                body = {"tool_id": TOOL, "input": ARGS}
                response = await http.post(f"{base}/v1/calls", json=body, headers=auth)
                ok = b'"status":"success"' in response.content
            elif path == SESSION_PATH:
                body = {"jsonrpc": "2.0", "id": next(ids), "method": "tools/call"}
                body["params"] = {"name": TOOL, "arguments": ARGS}
                headers = {**accept, **auth, "mcp-session-id": sessions[base]}
                response = await http.post(f"{base}/mcp", json=body, headers=headers)
                ok = b'"isError":true' not in response.content and b'"result"' in response.content
            else:
                headers = {**_HEADERS, **auth}
                response = await http.post(f"{base}/mcp", json=_mcp_body(next(ids)), headers=headers)
                ok = b'"isError":true' not in response.content
            if response.status_code != 200 or not ok:
                raise SystemExit(f"the gateway answered an error: {response.text[:300]}")

        for gateway in gateways.values():
            for path in paths:
                for _ in range(100):  # warm-up
                    await call(gateway, path)
        spent = {(name, path): [0, 0, 0] for name in gateways for path in paths}
        names = list(gateways)
        for turn in range(rounds):
            for path in paths:
                for name in names if turn % 2 == 0 else names[::-1]:
                    pid = gateways[name][1]
                    gateway_start, backend_start = cpu_ns(pid), cpu_ns(backend_pid)
                    for _ in range(calls):
                        await call(gateways[name], path)
                    total = spent[(name, path)]
                    total[0] += cpu_ns(pid) - gateway_start
                    total[1] += cpu_ns(backend_pid) - backend_start
                    total[2] += calls
    for path in paths:
        for name in names:
            gateway, backend, n = spent[(name, path)]
            print(
                f"{path:11} {name:15} gateway {gateway / n / 1e6:.3f} ms/call"
                f"  backend {backend / n / 1e6:.3f} ms/call  ratio {gateway / backend:.2f}x"
            )


def main(
    variants: list[tuple[str, str]],
    calls: int,
    rounds: int,
    floor: bool,
    session: bool,
    guarantee_floors: bool = False,
    auth: bool = False,
) -> None:
    with tempfile.TemporaryDirectory(prefix="colonnade-ab-") as tmp_name, contextlib.ExitStack() as logs:
        tmp = Path(tmp_name)
        procs: list[subprocess.Popen[bytes]] = []
        try:
            backend_port = free_port()
            backend_url = f"http://127.0.0.1:{backend_port}"
            procs.append(
                subprocess.Popen(
                    backend_command(backend_port, tmp / "d.db"),
                    cwd=ROOT,
                    env={**os.environ, "PYTHONPATH": str(ROOT)},
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.STDOUT,
                )
            )
            wait_http(f"{backend_url}/healthz", procs[-1], timeout=180)
            contracts = demo_contracts(tmp, backend_url)
            gateways: dict[str, Gateway] = {}
            for name, source in variants:
                port, home = free_port(), tmp / name
                home.mkdir()
                settings = {"PYTHONPATH": str(Path(source).resolve())}
                headers: dict[str, str] = {}
                if auth:
                    settings |= {"COLONNADE_AUTH__DEV_ISSUER": "true"}
                    settings |= {"COLONNADE_AUTH__RESOURCE": BENCH_RESOURCE}
                    headers = {"authorization": f"Bearer {demo_admin_token(home / 'data')}"}
                procs.append(gateway_process(home, port, contracts, logs, settings))
                wait_http(f"http://127.0.0.1:{port}/readyz", procs[-1], timeout=180)
                gateways[name] = (f"http://127.0.0.1:{port}", procs[-1].pid, headers)
            floors = {"floor": ""} if floor else {}
            if guarantee_floors:
                floors |= GUARANTEE_FLOORS | (dict([AUTH_FLOOR]) if auth else {})
            for name, guarantees in floors.items():
                port, home = free_port(), tmp / name
                command = [sys.executable, str(ROOT / "bench" / "gateway_floor.py"), "--port", str(port)]
                command += ["--backend", backend_url, "--guarantees", guarantees, "--data-dir", str(home)]
                token = demo_admin_token(home) if "auth" in guarantees else None
                headers = {"authorization": f"Bearer {token}"} if token else {}
                procs.append(subprocess.Popen(command, cwd=ROOT))
                wait_http(f"http://127.0.0.1:{port}/readyz", procs[-1], timeout=180)
                gateways[name] = (f"http://127.0.0.1:{port}", procs[-1].pid, headers)
            paths = PATHS if not session else (*PATHS, SESSION_PATH)
            if session:
                for name in floors:
                    del gateways[name]  # the floors speak no sessions
            asyncio.run(measure(gateways, procs[0].pid, calls, rounds, paths))
        finally:
            stop_all(procs)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=50, help="calls per block (default 50)")
    parser.add_argument("--rounds", type=int, default=40, help="rounds of blocks (default 40)")
    parser.add_argument("--floor", action="store_true", help="also run the bare forwarder (gateway_floor.py)")
    parser.add_argument(
        "--guarantee-floors",
        action="store_true",
        help="also run the forwarder with only the mandated work added (audit, envelope; auth with --auth)",
    )
    parser.add_argument(
        "--auth",
        action="store_true",
        help="gateways trust the dev issuer; calls carry the demo admin's token",
    )
    parser.add_argument(
        "--session", action="store_true", help="also call in one 2025-11-25 MCP session (path mcp-session)"
    )
    parser.add_argument("variants", nargs="+", help="NAME=SRC_FOLDER, two or more")
    arguments = parser.parse_args()
    pairs = [tuple(v.split("=", 1)) for v in arguments.variants]
    if len(pairs) < 2 or any(len(pair) != 2 or not Path(pair[1]).is_dir() for pair in pairs):
        parser.error("give two or more NAME=SRC_FOLDER variants whose folders exist")
    if arguments.calls < 1 or arguments.rounds < 1:
        parser.error("--calls and --rounds must be at least 1")
    variants = [(name, source) for name, source in pairs]
    main(
        variants,
        arguments.calls,
        arguments.rounds,
        arguments.floor,
        arguments.session,
        arguments.guarantee_floors,
        arguments.auth,
    )
