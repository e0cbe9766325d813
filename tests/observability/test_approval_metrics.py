"""Approval metrics from real approvals on a governed gateway: requested, approved, denied, expired,
and how long each took to its end, in the Prometheus exposition."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prometheus_client import generate_latest

from tests.support.governed import Governed, governed_gateway

DROP = "acme:items:drop_item"


def ask(governed: Governed, token: str, item: str) -> str:
    status, result = governed.call(token, DROP, item_id=item)
    assert status == 200 and result["status"] == "pending", result
    return str(result["pending"]["token"])


def post(governed: Governed, token: str, path: str, **body: Any) -> int:
    with governed.rest(token) as client:
        return client.post(path, json=body).status_code


def exposed(governed: Governed) -> dict[str, float]:
    text = generate_latest(governed.running.gateway.metrics.registry).decode()
    return {
        name: float(value)
        for line in text.splitlines()
        if line.startswith("colonnade_approval") and not line.startswith("#")
        for name, value in [line.rsplit(" ", 1)]
    }


def test_each_approval_is_counted_by_how_it_ended_with_its_wait(tmp_path: Path) -> None:
    with governed_gateway(tmp_path) as governed:
        alice, bob = governed.token("admin", sub="alice"), governed.token("admin", sub="bob")
        approved, denied, lapsing = (ask(governed, alice, item) for item in ("I-1", "I-2", "I-3"))
        assert post(governed, bob, f"/v1/approvals/{approved}/approve") == 200
        assert post(governed, bob, f"/v1/approvals/{denied}/deny", comment="no") == 200
        desk = governed.running.gateway.governance.approvals
        assert desk is not None
        governed.running.run(desk.expire(lapsing))  # what the sweep does once its time is up

        figures = exposed(governed)
    assert figures['colonnade_approvals_total{event="requested"}'] == 3
    for outcome in ("approved", "denied", "expired"):
        assert figures[f'colonnade_approvals_total{{event="{outcome}"}}'] == 1
        assert figures[f'colonnade_approval_decision_seconds_count{{outcome="{outcome}"}}'] == 1
        assert 0 <= figures[f'colonnade_approval_decision_seconds_sum{{outcome="{outcome}"}}'] < 600
