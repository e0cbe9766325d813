"""The `network: allow` forwarder, run by the real launcher: it relays to the host's port, bounds the
connections it relays at once (it is outside the server's cgroups), and frees a slot when one ends."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest

from colonnade.adapters.sandbox.confinement import launcher_prefix, plan, resolved_path
from colonnade.adapters.sandbox.forward import MAX_CONNECTIONS
from colonnade.config import McpServerSettings
from tests.support.machine_load import patient

pytestmark = pytest.mark.integration

# Inside the sandbox: open `extra` more connections than the forwarder relays at once, hold them,
# say how many were answered and how many reset; then close them and try once more.
CLIENT = """
import json, socket, sys, time
port, count = int(sys.argv[1]), int(sys.argv[2])
held, answered, reset = [], 0, 0
for _ in range(count):
    try:
        connection = socket.create_connection(("127.0.0.1", port), timeout=10)
        held.append(connection)
        connection.sendall(b"x")
        if connection.recv(1) == b"x":
            answered += 1
        else:
            reset += 1
    except OSError:
        reset += 1
for connection in held:
    connection.close()
again = False
deadline = time.monotonic() + float(sys.argv[3])
while not again and time.monotonic() < deadline:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
            connection.sendall(b"x")
            again = connection.recv(1) == b"x"
    except OSError:
        time.sleep(0.1)
print(json.dumps({"answered": answered, "reset": reset, "again": again}))
"""


@pytest.fixture
def echo_port() -> Iterator[int]:
    """A host service that answers each byte at once, on every connection it holds."""
    listener = socket.create_server(("127.0.0.1", 0), backlog=256)

    def answer(connection: socket.socket) -> None:
        with connection:
            while data := connection.recv(4096):
                connection.sendall(data)

    def serve() -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=answer, args=(connection,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    yield listener.getsockname()[1]
    listener.close()


def test_the_forwarder_relays_at_most_its_bound_at_once_and_frees_slots(echo_port: int) -> None:
    if os.geteuid() != 0:
        pytest.skip("the launcher's namespaces need a root gateway here")
    box = {
        "enabled": True,
        "enforce": "warn",
        "network": "allow",
        "net_allowlist": [f"127.0.0.1:{echo_port}"],
    }
    settings = McpServerSettings.model_validate(
        {"name": "f", "transport": "stdio", "command": sys.executable, "sandbox": {**box, "pids_max": None}}
    )
    spec = {
        **plan(settings).spec,
        "command": sys.executable,
        "path": resolved_path(settings),
        "cgroups": [],
        "memory_events": None,
        "memory_failcnt": None,
        "pids_events": None,
    }
    extra = 6
    client = [sys.executable, "-c", CLIENT, str(echo_port), str(MAX_CONNECTIONS + extra), str(patient(10))]
    done = subprocess.run(
        [*launcher_prefix(), json.dumps(spec), "--", *client],
        capture_output=True,
        text=True,
        timeout=patient(60),
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"answered": MAX_CONNECTIONS, "reset": extra, "again": True}
