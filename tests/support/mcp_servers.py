"""Real MCP servers from the registries (and two of ours), as `servers:` entries and processes.

Third-party: PyPI `mcp-server-time` and `mcp-server-git` (dev dependencies, in the venv), npm
`@modelcontextprotocol/server-filesystem`, `server-memory` and `server-everything` (installed by
`node_tools`), the last one also in its Streamable HTTP mode. Ours: the conformance reference
server (a Python SDK server over HTTP) and the fault server.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.support.loopback import free_port, start_process, stop_process, wait_http
from tests.support.node_tools import CACHE, install, node_env

__all__ = [
    "EVERYTHING",
    "FILESYSTEM",
    "MEMORY",
    "ROOT",
    "everything_http",
    "fault_http",
    "fault_stdio",
    "git_repo",
    "node_stdio",
    "python_http",
    "venv_stdio",
]

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
EVERYTHING = "@modelcontextprotocol/server-everything@2026.8.31"
FILESYSTEM = "@modelcontextprotocol/server-filesystem@2026.8.31"
MEMORY = "@modelcontextprotocol/server-memory@2026.8.31"


def venv_stdio(name: str, command: str, *args: str, **fields: Any) -> dict[str, Any]:
    """A stdio server whose executable is installed in this venv (a PyPI package)."""
    return {"name": name, "transport": "stdio", "command": str(BIN / command), "args": list(args), **fields}


def node_stdio(name: str, package: str, *args: str, **fields: Any) -> dict[str, Any]:
    """A stdio server from npm, run by the Node 22 that `node_tools` installs next to it."""
    node_bin = install(package)
    script = CACHE / "node_modules" / package.rsplit("@", 1)[0] / "dist" / "index.js"
    return {
        "name": name,
        "transport": "stdio",
        "command": str(node_bin / "node"),
        "args": [str(script), *args],
        "env": {"HOME": node_env(node_bin)["HOME"]},
        **fields,
    }


def fault_stdio(name: str, **fields: Any) -> dict[str, Any]:
    script = ROOT / "tests" / "support" / "fault_server.py"
    return {"name": name, "transport": "stdio", "command": sys.executable, "args": [str(script)], **fields}


def git_repo(path: Path) -> Path:
    """A small git repository with one commit, for `mcp-server-git`."""
    path.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com"}
    env.update(GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com")
    (path / "README.md").write_text("hello\n")
    for command in (
        ["init", "-q", "-b", "main"],
        ["add", "README.md"],
        ["commit", "-q", "-m", "first commit"],
    ):
        subprocess.run(["git", *command], cwd=path, env=env, check=True)
    return path


def everything_http(log: Path) -> tuple[subprocess.Popen[bytes], str]:
    """`server-everything` in its Streamable HTTP mode, kept on loopback by a preloaded module."""
    node_bin = install(EVERYTHING)
    port = free_port()
    env = node_env(node_bin)
    env.update(PORT=str(port), NODE_OPTIONS=f"--require {ROOT / 'tests' / 'support' / 'loopback.cjs'}")
    script = CACHE / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
    process = start_process([str(node_bin / "node"), str(script), "streamableHttp"], log, env=env)
    url = f"http://127.0.0.1:{port}/mcp"
    wait_http(url, process, log=log)
    return process, url


def python_http(script: Path, log: Path, *args: str) -> tuple[subprocess.Popen[bytes], str]:
    """One of our Python SDK servers over Streamable HTTP (the reference or the fault server)."""
    port = free_port()
    process = start_process([sys.executable, str(script), "--port", str(port), *args], log, cwd=ROOT)
    url = f"http://127.0.0.1:{port}/mcp"
    wait_http(url, process, log=log)
    return process, url


@contextlib.contextmanager
def reference_http(log: Path) -> Iterator[str]:
    """The conformance reference server over Streamable HTTP while the block runs: its URL."""
    process, url = python_http(ROOT / "tests" / "conformance" / "reference_server.py", log)
    try:
        yield url
    finally:
        stop_process(process)


def fault_http(log: Path) -> tuple[subprocess.Popen[bytes], str]:
    return python_http(ROOT / "tests" / "support" / "fault_server.py", log)
