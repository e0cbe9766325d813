"""Several gateway replicas in one test: one PostgreSQL database, one Redis prefix, each served by
uvicorn in its own thread and event loop (as separate processes would be), each with a long poll
so that only the change fan-out can explain a change arriving within a second.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from colonnade.config import (
    AuthSettings,
    RoutingSettings,
    ServerSettings,
    Settings,
    SharedStateSettings,
)
from colonnade.governance.key_admin import KeyRequest
from colonnade.governance.principal import Principal
from tests.support.machine_load import patient
from tests.support.redis_server import REDIS_UP_OP_TIMEOUT_S
from tests.surfaces.rest_harness import RunningGateway, serve_gateway

__all__ = ["LONG_POLL_S", "admin_key", "replica_settings", "replicas", "within"]

LONG_POLL_S = 300.0
"""Every poll of the replicas (catalog, agents, key cache, policy files) waits this long."""


def replica_settings(
    tmp: Path, database_url: str, redis_url: str, prefix: str, name: str, **changes: Any
) -> Settings:
    """One replica: shared database, data folder (keys) and Redis prefix; its own name and port."""
    auth = {
        "enabled": True,
        "resource": "http://127.0.0.1/mcp",
        "api_key_cache_s": LONG_POLL_S,
        **changes.pop("auth", {}),
    }
    return Settings(
        data_dir=tmp / "data",
        database_url=database_url,
        manifests_dir=None,
        catalog_poll_s=changes.pop("catalog_poll_s", LONG_POLL_S),
        routing=changes.pop("routing", RoutingSettings(enabled=False)),
        server=ServerSettings(host="127.0.0.1", port=0, **changes.pop("server", {})),
        auth=AuthSettings(**auth),
        shared_state=SharedStateSettings(
            redis_url=redis_url,
            key_prefix=prefix,
            replica_id=name,
            probe_interval_s=0.2,
            op_timeout_s=REDIS_UP_OP_TIMEOUT_S,
        ),
        **changes,
    )


@contextlib.contextmanager
def replicas(settings: list[Settings]) -> Iterator[list[RunningGateway]]:
    """Start each replica in turn (the first migrates the database) and wait until all listen."""
    with contextlib.ExitStack() as stack:
        running = [stack.enter_context(serve_gateway(one)) for one in settings]
        for replica in running:
            replica.run(asyncio.wait_for(replica.gateway.shared.fanout.listening(), patient(10)))
        yield running


def admin_key(replica: RunningGateway, owner: str = "root", persona: str = "admin", **fields: Any) -> str:
    """A key made directly through the replica's key admin (as `colonnade keys create` would)."""
    request = KeyRequest(owner=owner, persona=persona, **fields)
    issued = replica.run(replica.gateway.governance.key_admin.create(Principal.system("test"), request))
    return issued.token


def within(seconds: float, check: Callable[[], bool], *, step_s: float = 0.01) -> float | None:
    """Seconds until `check()` held, polling every `step_s`; None when it did not within `seconds`."""
    start = time.monotonic()
    while True:
        if check():
            return time.monotonic() - start
        if time.monotonic() - start > seconds:
            return None
        time.sleep(step_s)
