"""The real gateway (composition root, store, full pipeline) served by uvicorn on loopback, for REST tests.

The gateway is opened inside the server's own event loop, as `colonnade serve` does, so its
database engine and HTTP pools live where requests run. Sync `httpx2` clients talk to it, so
Hypothesis tests need no event loop of their own.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx2
import uvicorn
import uvloop
import yaml
from jsonschema import Draft202012Validator

from colonnade.calls.call_errors import REGISTRY
from colonnade.calls.envelope import CallStatus
from colonnade.calls.envelope_schemas import CALL_RESULT, CALL_RESULT_V1
from colonnade.config import RoutingSettings, ServerSettings, Settings
from colonnade.runtime.gateway import Gateway
from tests.support.repo import ROOT

__all__ = ["RunningGateway", "assert_typed_result", "demo_contract_file", "gateway_settings", "serve_gateway"]

T = TypeVar("T")
_FORMATS = Draft202012Validator.FORMAT_CHECKER
_RESULT_SCHEMAS = {
    version: Draft202012Validator(envelope.schema(), format_checker=_FORMATS)
    for version, envelope in ((1, CALL_RESULT_V1), (2, CALL_RESULT))
}


@dataclass(frozen=True)
class RunningGateway:
    client: httpx2.Client
    gateway: Gateway
    loop: asyncio.AbstractEventLoop

    def run(self, work: Coroutine[Any, Any, T]) -> T:
        """Run a coroutine on the gateway's loop (e.g. `publish_files`) and wait for its result."""
        return asyncio.run_coroutine_threadsafe(work, self.loop).result(timeout=30)


def demo_contract_file(directory: Path, name: str, base_url: str, **changes: Any) -> Path:
    """A copy of an example contract pointing at `base_url`, with top-level fields changed."""
    data = yaml.safe_load((ROOT / "examples" / "contracts" / f"{name}.yaml").read_text(encoding="utf-8"))
    data["backend"]["base_url"] = base_url
    data.update(changes)
    path = directory / f"{data['name']}-{data['version']}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def gateway_settings(data_dir: Path, contracts: list[Path], **changes: Any) -> Settings:
    """Embedded defaults under `data_dir`; no manifests folder, no router (REST lists the catalog)."""
    return Settings(
        data_dir=data_dir,
        contracts=contracts,
        manifests_dir=None,
        routing=RoutingSettings(enabled=False),
        server=ServerSettings(host="127.0.0.1", port=0, page_size=changes.pop("page_size", 200)),
        **changes,
    )


@contextmanager
def serve_gateway(settings: Settings) -> Iterator[RunningGateway]:
    """Open the gateway and serve its HTTP app on its configured host and port (a free one for port 0)."""
    host = settings.server.host
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a restart binds its port again at once
    sock.bind((host, settings.server.port))
    port = sock.getsockname()[1]
    state: dict[str, Any] = {}

    async def main() -> None:
        gateway = await Gateway.open(settings)
        try:
            config = uvicorn.Config(gateway.http_app(), log_level="warning", lifespan="on", access_log=False)
            server = uvicorn.Server(config)
            state.update(gateway=gateway, server=server, loop=asyncio.get_running_loop())
            await server.serve(sockets=[sock])
        finally:
            await gateway.aclose()

    def thread_main() -> None:
        try:
            uvloop.run(main())  # as `colonnade serve` runs it
        except BaseException as exc:  # surfaced to the test below
            state["error"] = exc

    thread = threading.Thread(target=thread_main, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not (state.get("server") and state["server"].started):
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"the gateway did not start: {state.get('error')!r}")
        time.sleep(0.01)
    try:
        with httpx2.Client(base_url=f"http://{host}:{port}", timeout=30.0) as client:
            yield RunningGateway(client, state["gateway"], state["loop"])
    finally:
        state["server"].should_exit = True
        thread.join(15)
        sock.close()


def assert_typed_result(response: httpx2.Response) -> dict[str, Any]:
    """Never a 5xx; always a JSON CallResult valid against the published schema of its envelope
    version, with a registered code."""
    assert response.status_code < 500, response.text
    assert response.headers["content-type"].startswith("application/json")
    result = response.json()
    schema = _RESULT_SCHEMAS[result.get("envelope_version")]
    problems = [f"{list(e.absolute_path)}: {e.message}" for e in schema.iter_errors(result)]
    assert not problems, problems
    status = CallStatus(result["status"])
    if result["error"] is not None:
        spec = REGISTRY[result["error"]["code"]]
        assert spec.status is status, (spec.code, spec.status, status)
    return dict(result)
