"""`make install`'s progress: what is installed, a moving count, pip's log kept, and pip's failure shown.

The command the script watches is a real process printing pip's lines (pip itself would need the
network and two minutes); the script, its output and the exit codes are the real ones.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support.repo import ROOT

SCRIPT = ROOT / "scripts" / "install_progress.py"
PIP_LIKE = """
import sys
for name in [f"pkg{i}" for i in range(25)]:
    print(f"Collecting {name}")
    print(f"  Using cached {name}-1.0-py3-none-any.whl")
print("Installing collected packages: " + ", ".join(f"pkg{i}" for i in range(25)))
if sys.argv[1] == "fail":
    print("ERROR: No matching distribution found for pkg25")
    sys.exit(1)
print("Successfully installed pkg0 pkg1")
"""


def _install(tmp_path: Path, outcome: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", PIP_LIKE, outcome]
    return subprocess.run(
        [sys.executable, str(SCRIPT), str(tmp_path / "install.log"), "--", *command],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_it_says_what_it_installs_and_counts_packages_off_a_terminal(tmp_path: Path) -> None:
    run = _install(tmp_path, "ok")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("installing Colonnade and its dependencies into .venv")
    assert "about 2 minutes" in lines[0] and str(tmp_path / "install.log") in lines[0]
    counted = [line for line in lines if "packages] Collecting" in line]
    shown = [line.split("] ")[1] for line in counted]
    assert shown == ["Collecting pkg0", "Collecting pkg10", "Collecting pkg20"]
    assert lines[-1].startswith("installed in ") and "(25 packages collected)" in lines[-1]
    assert "\r" not in run.stdout  # a log in CI gets plain lines, not a redrawn one
    assert (tmp_path / "install.log").read_text().count("Using cached") == 25  # pip's whole output kept


def test_a_failing_pip_shows_its_last_lines_and_its_exit_code(tmp_path: Path) -> None:
    run = _install(tmp_path, "fail")
    assert run.returncode == 1
    assert "pip failed (exit 1)" in run.stderr
    assert "ERROR: No matching distribution found for pkg25" in run.stderr


def test_make_install_runs_pip_through_it() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}  # also under `make test`
    make = subprocess.run(
        ["make", "--no-print-directory", "-n", "-B", "install"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
        env=env,
    )
    assert make.returncode == 0, make.stderr
    recipe = " ".join(make.stdout.replace("\\\n", " ").split())
    assert "scripts/install_progress.py .venv/install.log -- .venv/bin/pip install" in recipe, recipe
