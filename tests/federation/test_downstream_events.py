"""A downstream server's session coming up is a typed trace event, served at /v1/trace-events."""

from __future__ import annotations

from pathlib import Path

import httpx2

from tests.federation.conftest import run_gateway
from tests.support.mcp_servers import venv_stdio


def test_a_server_that_connects_is_recorded_with_its_protocol_version(tmp_path: Path) -> None:
    with run_gateway(tmp_path, [venv_stdio("time", "mcp-server-time")]) as gateway:
        answer = httpx2.get(
            f"{gateway.base}/v1/trace-events", params={"kind": "downstream.connected"}, timeout=10
        )
        status = gateway.status()
    assert answer.status_code == 200
    events = answer.json()["events"]
    assert [event["server"] for event in events] == ["time"]
    (event,) = events
    assert event["protocol_version"]  # what the handshake negotiated
    assert status["trace_events"]["emitted_by_kind"]["downstream.connected"] == 1
