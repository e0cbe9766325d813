"""How long `colonnade` takes to start: wall and CPU time of a fresh process per command (issue 26 item 7).

Each command runs as its own process (`python -m colonnade.cli ...` would differ from the console
script only by the entry point), the commands taking turns round after round so that every one sees
the same machine. CPU is the children's user + system time, which a busy machine inflates less than
wall time; both are printed (median and best). The target: `--version` and `--help` under 0.5 s.

`--modules` adds, per command, how many modules the process had loaded and whether the gateway
(`colonnade.runtime`) was among them. `--gateway URL` adds `tools search` asked of a gateway
running there (start one with `colonnade serve`), beside the same search ranked here (`--local`).

Run: .venv/bin/python bench/cli_startup.py [--rounds 10] [--modules] [--gateway http://127.0.0.1:8765]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS: list[tuple[str, ...]] = [
    ("--version",),
    ("--help",),
    ("tools", "--help"),
    ("tools", "search", "--help"),
    ("errors",),
]

_ENTRY = "import sys; from colonnade.cli import main; sys.argv[0] = 'colonnade'; main()"
_MODULES = """
import json, sys
sys.argv = ["colonnade", *json.loads(sys.argv[1])]
from colonnade.cli import main
try:
    main()
except SystemExit:
    pass
sys.stderr.write("\\nMODULES " + json.dumps(sorted(sys.modules)))
"""


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run_once(args: tuple[str, ...], env: dict[str, str]) -> tuple[float, float]:
    cpu_before = _children_cpu()
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _ENTRY, *args], env=env, capture_output=True, check=False, timeout=120
    )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        problem = done.stderr.decode()[-400:]
        raise SystemExit(f"colonnade {' '.join(args)} failed ({done.returncode}): {problem}")
    return wall, _children_cpu() - cpu_before


def _modules(args: tuple[str, ...], env: dict[str, str]) -> set[str]:
    command = [sys.executable, "-c", _MODULES, json.dumps(list(args))]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    return set(json.loads(done.stderr[done.stderr.rfind("MODULES ") + len("MODULES ") :]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10, help="runs of each command (default 10)")
    parser.add_argument("--modules", action="store_true", help="also count the modules each command loads")
    parser.add_argument("--gateway", metavar="URL", help="also time `tools search` asked of this gateway")
    options = parser.parse_args()
    commands = list(COMMANDS)
    if options.gateway:
        query = "refund a paid invoice"
        commands += [
            ("tools", "search", query, "--url", options.gateway),
            ("tools", "search", query, "--local"),
        ]
    env = {
        **os.environ,
        "COLUMNS": "100",
        "COLONNADE_DATA_DIR": str(Path.cwd() / ".colonnade" / "bench-cli"),
        "COLONNADE_CONTRACTS": json.dumps([str(ROOT / "examples" / "contracts")]),  # for the local search
    }

    walls: dict[tuple[str, ...], list[float]] = {args: [] for args in commands}
    cpus: dict[tuple[str, ...], list[float]] = {args: [] for args in commands}
    for args in commands:  # one unmeasured run each: the bytecode cache is written, the page cache warm
        _run_once(args, env)
    for _ in range(options.rounds):
        for args in commands:
            wall, cpu = _run_once(args, env)
            walls[args].append(wall)
            cpus[args].append(cpu)

    load = os.getloadavg()[0]
    print(f"colonnade start-up, {options.rounds} rounds, {os.cpu_count()} cores, load {load:.1f}")
    width = max(len("colonnade " + " ".join(args)) for args in commands) + 1
    header = f"{'command':<{width}} {'wall median':>11} {'wall best':>9} {'CPU median':>10} {'CPU best':>8}"
    if options.modules:
        header += f" {'modules':>7} {'gateway':>7}"
    print(header)
    for args in commands:
        wall, cpu = walls[args], cpus[args]
        line = (
            f"{'colonnade ' + ' '.join(args):<{width}} {statistics.median(wall):>10.3f}s {min(wall):>8.3f}s"
            f" {statistics.median(cpu):>9.3f}s {min(cpu):>7.3f}s"
        )
        if options.modules:
            loaded = _modules(args, env)
            line += f" {len(loaded):>7} {'yes' if 'colonnade.runtime' in loaded else 'no':>7}"
        print(line)


if __name__ == "__main__":
    main()
