"""Run `pip install` and show a new user what is happening: one line that moves, not two silent minutes.

`make install` (and so the first `make run`) calls it as
`python scripts/install_progress.py LOG -- pip install ...`: pip's full output goes to LOG; the
terminal gets what is being installed, a count of packages collected so far, and the time taken.
Off a terminal (CI, a pipe) it prints a plain line every few packages instead of redrawing one.
If pip fails, the last lines of its output are shown, and the exit code is pip's. Standard library
only: it runs before anything is installed.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections import deque
from pathlib import Path

__all__ = ["main"]

_STEPS = (
    "Collecting ",
    "Downloading ",
    "Building ",
    "Installing collected packages",
    "Successfully installed",
)
_PLAIN_EVERY = 10
"""Off a terminal: one line per this many packages collected."""
_TAIL = 30


def _step(line: str) -> str | None:
    """The part of a pip output line worth showing, if it is a step."""
    stripped = line.strip()
    for step in _STEPS:
        if stripped.startswith(step):
            return stripped[:100]
    return None


def main(argv: list[str]) -> int:
    if "--" not in argv or argv.index("--") != 1:
        print("usage: install_progress.py LOG -- COMMAND...", file=sys.stderr)
        return 2
    log_path, command = Path(argv[0]), argv[2:]
    live = sys.stdout.isatty()
    print(
        "installing Colonnade and its dependencies into .venv: once per checkout, about 2 minutes on a "
        f"laptop (pip's full output: {log_path})",
        flush=True,
    )
    started, collected, tail = time.monotonic(), 0, deque[str](maxlen=_TAIL)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("w", encoding="utf-8") as log:
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace"
        )
        assert process.stdout is not None
        for line in process.stdout:
            log.write(line)
            tail.append(line.rstrip("\n"))
            step = _step(line)
            if step is None:
                continue
            if step.startswith("Collecting "):
                collected += 1
            elapsed = time.monotonic() - started
            shown = f"  [{elapsed:4.0f} s, {collected} packages] {step}"
            if live:
                print(f"\r\033[K{shown}", end="", flush=True)
            elif step.startswith(("Installing", "Successfully")) or (
                step.startswith("Collecting ") and collected % _PLAIN_EVERY == 1
            ):
                print(shown, flush=True)
        code = process.wait()
    if live:
        print()
    elapsed = time.monotonic() - started
    if code != 0:
        print(f"pip failed (exit {code}) after {elapsed:.0f} s; its last lines:", file=sys.stderr)
        for line in tail:
            print(f"  {line}", file=sys.stderr)
        return code
    print(f"installed in {elapsed:.0f} s ({collected} packages collected)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
