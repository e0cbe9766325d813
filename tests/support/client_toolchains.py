"""The TypeScript and Rust clients' toolchains for their tests: present, or a skip that says why.

npm installs the TypeScript client's pinned dev dependencies (package-lock.json) into its own
`node_modules` once, one install at a time; cargo builds the Rust types from Debian's crates
(`make rust-crates`) into `.cache/cargo-target`, so the source folder stays clean.
"""

from __future__ import annotations

import fcntl
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.repo import ROOT

__all__ = ["CARGO_TARGET", "RUST_CLIENT", "TS_CLIENT", "cargo", "npm_ready"]

TS_CLIENT = ROOT / "clients" / "typescript"
RUST_CLIENT = ROOT / "clients" / "rust"
CARGO_TARGET = ROOT / ".cache" / "cargo-target"
_DEBIAN_CRATES = Path("/usr/share/cargo/registry")


def npm_ready() -> Path:
    """The TypeScript client's folder with its dev dependencies installed (or skip)."""
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        pytest.skip("node and npm are not installed: the TypeScript client is not tested here")
    (ROOT / ".cache").mkdir(exist_ok=True)
    with (ROOT / ".cache" / "ts-client.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (TS_CLIENT / "node_modules" / ".bin" / "tsc").exists():
            run = subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund"],
                cwd=TS_CLIENT,
                capture_output=True,
                text=True,
                timeout=600,
            )
            if run.returncode != 0 and any(
                code in run.stderr for code in ("ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT")
            ):
                pytest.skip(
                    "npm cannot reach its registry: the TypeScript client's tools cannot be installed"
                )
            assert run.returncode == 0, f"npm ci failed:\n{run.stderr[-2000:]}"
    return TS_CLIENT


def cargo() -> str:
    """The cargo command, when it and Debian's serde crates are here (or skip, saying how to get them)."""
    found = shutil.which("cargo")
    if found is None:
        pytest.skip("cargo is not installed: the Rust types are not tested here")
    needed = ("serde-1", "serde_derive-1", "serde_json-1")
    if not all(any(_DEBIAN_CRATES.glob(f"{crate}.*")) for crate in needed):
        pytest.skip("Debian's serde crates are missing: `make rust-crates` installs them (apt-get)")
    return found
