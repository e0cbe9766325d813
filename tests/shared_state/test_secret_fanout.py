"""A stored secret rotated through one replica is what the other replica sends upstream within a
second, though its cache (`vault.cache_s`) would keep the old value for an hour: the change came
over the fan-out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from starlette.types import ASGIApp, Receive, Scope, Send

from colonnade.config import VaultSettings
from colonnade.governance.principal import Principal
from tests.shared_state.replicas import admin_key, replica_settings, replicas, within
from tests.support.fault_backend import FaultBackend, create_app
from tests.support.loopback import serve_in_thread
from tests.support.machine_load import patient
from tests.support.tenant_contracts import tenant_contract

FIRST = "fanout-first-3e8a1c"
SECOND = "fanout-second-7b2d9f"
TEST = Principal.system("test")


class _Authorizations:
    def __init__(self, app: ASGIApp, seen: list[str | None]) -> None:
        self.app, self.seen = app, seen

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] != "/healthz":
            value = dict(scope["headers"]).get(b"authorization")
            self.seen.append(value.decode() if value is not None else None)
        await self.app(scope, receive, send)


def _contract(folder: Path, backend_url: str) -> Path:
    document: dict[str, Any] = tenant_contract("acme", "items", backend_url).model_dump(
        mode="json", exclude_none=True
    )
    document["backend"]["auth"] = {"type": "bearer", "secret": "store:crm-token"}
    path = folder / "acme-items.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return path


async def test_a_secret_rotated_through_one_replica_is_sent_by_the_other_within_a_second(
    tmp_path: Path, replica_database: str, redis_url: str, redis_prefix: str
) -> None:
    seen: list[str | None] = []
    with serve_in_thread(_Authorizations(create_app(FaultBackend()), seen)) as backend_url:
        contract = _contract(tmp_path, backend_url)
        settings = [
            replica_settings(
                tmp_path,
                replica_database,
                redis_url,
                redis_prefix,
                name,
                contracts=[contract],
                vault=VaultSettings(cache_s=3600),
            )
            for name in "ab"
        ]
        with replicas(settings) as (a, b):
            admin = a.gateway.governance.secret_admin
            assert admin is not None
            a.run(admin.set(TEST, "crm-token", FIRST, tenant="acme"))
            headers = {"authorization": f"Bearer {admin_key(a)}"}

            def call_b() -> None:
                body = {"tool_id": "acme:items:read_item", "input": {"item_id": "I-1"}}
                result = b.client.post("/v1/calls", json=body, headers=headers).json()
                assert result["status"] == "success", result

            call_b()
            assert seen[-1] == f"Bearer {FIRST}"  # b read it and keeps it for an hour
            received = b.gateway.shared.fanout.received
            a.run(admin.rotate(TEST, "crm-token", SECOND, tenant="acme", overlap_s=60))

            def sends_the_new_one() -> bool:
                call_b()
                return seen[-1] == f"Bearer {SECOND}"

            took = within(patient(1.0), sends_the_new_one, step_s=0.05)
            assert took is not None, "the rotation did not reach the other replica within 1 s"
            assert b.gateway.shared.fanout.received > received
