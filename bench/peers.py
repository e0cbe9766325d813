"""Peer proxies that benchmarks measure beside Colonnade, each in its own venv under `.bench-peers/`
(git-ignored) at a pinned version: a peer is never a dependency of the project, and a number quoted
for it names the exact release measured.

Run: .venv/bin/python bench/peers.py install fastmcp   (needs PyPI; a benchmark never installs)
     .venv/bin/python bench/peers.py check fastmcp
"""

from __future__ import annotations

import argparse
import importlib.metadata
import subprocess
import sys
import venv
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HERE = ROOT / "bench"
FOLDER = ROOT / ".bench-peers"

__all__ = ["PEERS", "Peer", "PeerMissing", "install", "installed_version", "require"]


class PeerMissing(RuntimeError):
    """The peer's venv is absent or holds another version than the pinned one."""


@dataclass(frozen=True)
class Peer:
    name: str
    label: str
    package: str
    version: str
    companions: tuple[str, ...]
    """Other exact pins of the venv (the server stack the peer runs on)."""
    server: Path
    """The script, run with the peer's Python, that serves the peer: `--port P --upstream URL`."""
    folder: Path = FOLDER

    @property
    def venv(self) -> Path:
        return self.folder / self.name

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def requirements(self) -> tuple[str, ...]:
        return (f"{self.package}=={self.version}", *self.companions)

    @property
    def install_hint(self) -> str:
        return f".venv/bin/python bench/peers.py install {self.name}"

    def command(self, port: int, upstream: str) -> list[str]:
        return [str(self.python), str(self.server), "--port", str(port), "--upstream", upstream]


PEERS = {
    "fastmcp": Peer(
        name="fastmcp",
        label="FastMCP",
        package="fastmcp",
        version="4.1.6",
        # the gateway's own server stack (uvicorn picks both up when present); pinned like the peer
        companions=("uvloop==0.23.0", "httptools==0.9.0"),
        server=HERE / "peer_fastmcp.py",
    ),
}


def installed_version(peer: Peer, package: str | None = None) -> str | None:
    """The version of the peer's package (or of `package`) in its venv, or None when absent."""
    if not peer.python.exists():
        return None
    wanted = package or peer.package
    for site in sorted(peer.venv.glob("lib/python*/site-packages")):
        for dist in importlib.metadata.distributions(path=[str(site)]):
            if dist.metadata["Name"].lower() == wanted:
                return dist.version
    return None


def require(peer: Peer) -> Peer:
    """The peer, once its venv holds the pinned version; else PeerMissing that says how to install it."""
    found = installed_version(peer)
    if found == peer.version:
        return peer
    state = "is not installed" if found is None else f"is {found}, not the pinned {peer.version}"
    raise PeerMissing(
        f"peer {peer.name}: {peer.package} in {peer.venv} {state}; install it with `{peer.install_hint}` "
        "(it needs PyPI; the benchmark never installs on its own)"
    )


def install(peer: Peer) -> None:
    """Create the peer's venv and install its exact pins into it (network: PyPI)."""
    if not peer.python.exists():
        venv.EnvBuilder(with_pip=True).create(peer.venv)
    subprocess.run([str(peer.python), "-m", "pip", "install", *peer.requirements], check=True)
    require(peer)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("action", choices=("install", "check"), help="install the pins, or check them")
    parser.add_argument("peer", choices=sorted(PEERS), help="which peer")
    arguments = parser.parse_args(argv)
    peer = PEERS[arguments.peer]
    if arguments.action == "install":
        install(peer)
    try:
        require(peer)
    except PeerMissing as missing:
        print(missing, file=sys.stderr)
        return 1
    print(f"peer {peer.name}: {', '.join(peer.requirements)} in {peer.venv}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
