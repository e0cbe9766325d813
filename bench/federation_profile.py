"""Where does the gateway's CPU go on each federation path? A profile of the gateway process per path.

For each path of `bench/federation_overhead.py` ((b) `/mcp` and (c) `/servers/echo/mcp`, each era
on the client side), a fresh gateway with the echo upstream behind it is called `--calls` times by
the official `mcp.Client`; cProfile (timed by the process's CPU clock, so waiting costs nothing)
runs in the gateway only while those calls are made (switched on and off by signals). The table
is each library's exclusive CPU per call, summed over its functions: profiling inflates every
figure several times (many small calls), so compare columns and shares, not absolute numbers.

`--keep DIR` keeps the profiles there (`{path}-{mode}.prof`, for `python -m pstats`).

Run: .venv/bin/python bench/federation_profile.py [--calls 2000] [--src DIR] [--keep DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import pstats
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2
import yaml
from mcp import Client

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _stack import cpu_seconds, echo_upstream, free_port, wait_http

PATHS = (("/mcp", "auto"), ("/servers/echo/mcp", "auto"), ("/mcp", "legacy"), ("/servers/echo/mcp", "legacy"))
# The gateway, with a profiler that SIGUSR1 switches on and SIGUSR2 off (and writes to $PROFILE_TO).
_LAUNCH = """
import cProfile, os, signal, sys, time
from colonnade.cli import main
profile = cProfile.Profile(time.process_time)
signal.signal(signal.SIGUSR1, lambda *_: profile.enable())
signal.signal(signal.SIGUSR2, lambda *_: (profile.disable(), profile.dump_stats(os.environ["PROFILE_TO"])))
sys.argv[0] = "colonnade"
main()
"""
GROUPS = (
    ("uvicorn", ("uvicorn/", "httptools")),
    ("starlette (router, requests, responses)", ("starlette/",)),
    ("colonnade surfaces (edge, MCP surface)", ("colonnade/surfaces/", "colonnade/cli/")),
    ("mcp SDK, server side", ("mcp/server/", "mcp/shared/inbound", "mcp/shared/transport")),
    (
        "mcp SDK, client side",
        (
            "mcp/client/",
            "mcp/shared/jsonrpc_dispatcher",
            "mcp/shared/_context_streams",
            "mcp/shared/dispatcher",
        ),
    ),
    ("mcp SDK, other (types, shared)", ("mcp/", "mcp_types/")),
    ("httpx2/httpcore2", ("httpx2/", "httpcore2/")),
    ("aiohttp", ("aiohttp/", "yarl/", "multidict/")),
    ("colonnade adapters (the MCP hop)", ("colonnade/adapters/",)),
    ("colonnade pipeline (calls, governance, observability, store)", ("colonnade/",)),
    ("anyio", ("anyio/",)),
    ("asyncio, uvloop", ("asyncio/", "uvloop")),
    ("pydantic", ("pydantic",)),
    ("sqlalchemy, aiosqlite", ("sqlalchemy", "aiosqlite", "sqlite")),
    ("opentelemetry, structlog, logging", ("opentelemetry", "structlog", "logging/")),
    ("built-ins (socket calls, json, ...)", ("~",)),
)
OTHER = "other libraries and stdlib"


def _group(filename: str) -> str:
    for label, needles in GROUPS:
        if any(needle in filename for needle in needles):
            return label
    return OTHER


def profile_path(upstream: str, path: str, mode: str, calls: int, src: Path | None, out: Path) -> float:
    """Profile one path in a fresh gateway; the gateway's CPU ms per call without the profiler's clock."""
    home = Path(tempfile.mkdtemp(prefix="colonnade-profile-"))
    config = {
        "data_dir": str(home / "data"),
        "servers": [{"name": "echo", "transport": "http", "url": upstream}],
    }
    (home / "colonnade.yaml").write_text(yaml.safe_dump(config))
    env = {k: v for k, v in os.environ.items() if not k.startswith("COLONNADE_")} | {"PROFILE_TO": str(out)}
    if src is not None:
        env["PYTHONPATH"] = str(src)
    port = free_port()
    with (home / "gateway.log").open("wb") as log:
        gateway = subprocess.Popen(
            [sys.executable, "-c", _LAUNCH, "serve", "--port", str(port)],
            cwd=home,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_http(f"{base}/readyz", gateway, timeout=60)
        while httpx2.get(f"{base}/v1/servers/echo", timeout=5).json().get("state") != "ready":
            time.sleep(0.1)
        tool = "default__echo__echo" if path == "/mcp" else "echo"

        async def run() -> float:
            async with Client(base + path, mode=mode) as client:
                for _ in range(50):
                    await client.call_tool(tool, {"text": "ping"})
                gateway.send_signal(signal.SIGUSR1)
                await asyncio.sleep(0.2)
                before = cpu_seconds(gateway.pid) or 0.0
                for _ in range(calls):
                    await client.call_tool(tool, {"text": "ping"})
                after = cpu_seconds(gateway.pid) or 0.0
                gateway.send_signal(signal.SIGUSR2)
                await asyncio.sleep(1.0)
                return (after - before) * 1000 / calls

        return asyncio.run(run())
    finally:
        gateway.terminate()
        gateway.wait(timeout=30)


def grouped(profile: Path, calls: int) -> dict[str, float]:
    per_group: collections.Counter[str] = collections.Counter()
    for (filename, _, _), (_, _, own, _, _) in pstats.Stats(str(profile)).stats.items():  # type: ignore[attr-defined]
        per_group[_group(filename)] += own * 1000 / calls
    return dict(per_group)


def main(calls: int, src: Path | None, keep: Path | None = None) -> None:
    columns: list[tuple[str, dict[str, float], float]] = []
    with (
        echo_upstream() as upstream,
        tempfile.TemporaryDirectory(prefix="colonnade-profiles-") as scratch,
    ):
        folder = Path(scratch) if keep is None else keep
        folder.mkdir(parents=True, exist_ok=True)
        for path, mode in PATHS:
            out = Path(folder) / f"{path.strip('/').replace('/', '-')}-{mode}.prof"
            cpu = profile_path(upstream, path, mode, calls, src, out)
            era = "2026-07-28" if mode == "auto" else "2025-11-25"
            columns.append((f"{path} {era}", grouped(out, calls), cpu))
    labels = [label for label, _ in GROUPS] + [OTHER]
    width = max(len(label) for label in labels) + 2
    print(f"{calls} calls per path; exclusive CPU ms per call under cProfile, by library")
    print("".ljust(width) + "".join(f"{name:>30}" for name, _, _ in columns))
    for label in labels:
        print(label.ljust(width) + "".join(f"{groups.get(label, 0.0):>30.3f}" for _, groups, _ in columns))
    print(
        "total (profiled)".ljust(width)
        + "".join(f"{sum(groups.values()):>30.3f}" for _, groups, _ in columns)
    )
    print("gateway CPU ms/call, /proc".ljust(width) + "".join(f"{cpu:>30.3f}" for _, _, cpu in columns))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=2000, help="profiled calls per path (default 2000)")
    parser.add_argument(
        "--src", type=Path, help="run the gateway from this source tree (e.g. a baseline's src/)"
    )
    parser.add_argument("--keep", type=Path, help="keep the profiles in this folder")
    arguments = parser.parse_args()
    main(arguments.calls, arguments.src, arguments.keep)
