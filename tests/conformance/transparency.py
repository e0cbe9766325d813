"""Is Colonnade transparent? The conformance suite against the reference server, then through the gateway.

Starts `reference_server.py` and a `colonnade serve` whose only downstream server it is, runs
`@modelcontextprotocol/conformance` (`--suite all`) at 2025-11-25 and 2026-07-28 against the
reference directly and against `/servers/reference/mcp`, and compares the results check by check.
Prints both counts per era and every check whose status differs; exits 1 on any difference, 2
when npm (or its registry) is out of reach. `scripts/conformance.sh` runs this module.

Only scored checks count (SUCCESS, FAILURE, WARNING, SKIPPED); the suite's INFO rows trace the
requests it sent and the events it saw, whose number depends on timing (an answer already there
when a client resumes a stream comes in one event, not two), so their differences are listed as
notes. A run that differs is repeated once, both sides; only a difference that repeats fails.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import httpx2
import yaml

from tests.support.loopback import free_port, start_process, stop_process, wait_http
from tests.support.node_tools import CACHE, NpmMissing, ensure, node_env

__all__ = ["SUITE", "VERSIONS", "Rows", "compare", "main", "run_suite"]

SUITE = "@modelcontextprotocol/conformance@0.2.0-alpha.12"
VERSIONS = ("2025-11-25", "2026-07-28")
ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "tests" / "conformance" / "reference_server.py"
COLONNADE = Path(sys.executable).with_name("colonnade")
SCORED = ("SUCCESS", "FAILURE", "WARNING", "SKIPPED")
ATTEMPTS = 2
"""A difference counts only when it shows in a second run of both sides too: the SSE resumption
checks wait on fixed client timers (5 s for a resumed stream), which a loaded CI machine has missed
once through the extra hop while the same check passed directly."""

Rows = Counter[tuple[str, str, str]]
"""(scenario, check id, status) -> how often the suite reported it."""


def run_suite(node_bin: Path, url: str, version: str, out: Path) -> Rows:
    out.mkdir(parents=True, exist_ok=True)
    command = [
        str(node_bin / "node"),
        str(CACHE / "node_modules" / ".bin" / "conformance"),
        "server",
        "--url",
        url,
        "--suite",
        "all",
        "--spec-version",
        version,
        "-o",
        str(out),
    ]
    run = subprocess.run(command, capture_output=True, text=True, timeout=600, env=node_env(node_bin))
    rows: Rows = Counter()
    for folder in sorted(out.glob("server-*")):
        scenario = re.sub(r"-\d{4}-\d{2}-\d{2}T[\d-]+Z$", "", folder.name)[len("server-") :]
        for check in json.loads((folder / "checks.json").read_text()):
            rows[(scenario, check["id"], check["status"])] += 1
    if not rows:
        raise RuntimeError(f"the suite reported nothing for {url}:\n{run.stdout[-2000:]}{run.stderr[-2000:]}")
    return rows


def score(rows: Rows) -> tuple[int, int]:
    """(passed, scored checks)."""
    scored = sum(n for (_, _, status), n in rows.items() if status in SCORED)
    passed = sum(n for (_, _, status), n in rows.items() if status == "SUCCESS")
    return passed, scored


def compare(direct: Rows, gateway: Rows) -> tuple[list[str], list[str]]:
    """(differing scored checks, differing INFO rows), one line each."""
    differences: list[str] = []
    notes: list[str] = []
    for row in sorted(set(direct) | set(gateway)):
        if direct[row] == gateway[row]:
            continue
        scenario, check, status = row
        line = f"{scenario} {check} {status}: direct {direct[row]}, through Colonnade {gateway[row]}"
        (differences if status in SCORED else notes).append(line)
    return differences, notes


def _gateway(tmp: Path, upstream: str) -> tuple[subprocess.Popen[bytes], str]:
    tmp.mkdir(parents=True, exist_ok=True)
    config = {
        "data_dir": str(tmp / "data"),
        "servers": [{"name": "reference", "transport": "http", "url": upstream}],
    }
    (tmp / "colonnade.yaml").write_text(yaml.safe_dump(config))
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("COLONNADE_")}
    log = tmp / "gateway.log"
    process = start_process([str(COLONNADE), "serve", "--port", str(port)], log, cwd=tmp, env=env)
    base = f"http://127.0.0.1:{port}"
    wait_http(f"{base}/readyz", process, log=log)
    deadline = time.monotonic() + 60
    while httpx2.get(f"{base}/v1/servers/reference", timeout=5).json().get("state") != "ready":
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"the gateway did not connect to the reference server:\n{log.read_text()[-3000:]}"
            )
        time.sleep(0.2)
    return process, f"{base}/servers/reference/mcp"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="keep the suite's results in this folder")
    args = parser.parse_args(argv)
    try:
        node_bin = ensure(SUITE)
    except NpmMissing as exc:
        print(f"conformance: skipped: {exc}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="colonnade-conformance-") as scratch:
        tmp = Path(scratch)
        out = args.out or tmp / "results"
        reference_port = free_port()
        reference = start_process(
            [sys.executable, str(REFERENCE), "--port", str(reference_port)], tmp / "reference.log", cwd=ROOT
        )
        gateway = None
        try:
            direct_url = f"http://127.0.0.1:{reference_port}/mcp"
            wait_http(direct_url, reference, log=tmp / "reference.log")
            gateway, gateway_url = _gateway(tmp / "gateway", direct_url)
            failed = False
            for version in VERSIONS:
                for attempt in range(1, ATTEMPTS + 1):
                    runs = out / version / f"attempt-{attempt}"
                    direct = run_suite(node_bin, direct_url, version, runs / "direct")
                    through = run_suite(node_bin, gateway_url, version, runs / "colonnade")
                    differences, notes = compare(direct, through)
                    (dp, ds), (gp, gs) = score(direct), score(through)
                    print(f"{version}: directly {dp}/{ds} checks passed; through Colonnade {gp}/{gs}")
                    for line in differences:
                        print(f"  differs: {line}")
                    for line in notes:
                        print(f"  note (INFO trace): {line}")
                    if not differences:
                        break
                    if attempt < ATTEMPTS:
                        print(f"  {version}: running both again (a difference must repeat to count)")
                failed |= bool(differences)
        finally:
            if gateway is not None:
                stop_process(gateway)
            stop_process(reference)
    print(
        "transparent: every scored check is the same"
        if not failed
        else "NOT transparent: see the differences"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
