"""Two governed gateways, plain MCP calls on and off, and the answer of a request as they compare.

The differential tests of the plain-call path at `/mcp` (`test_mcp_plain_call.py`) send the same
raw requests to both gateways in the same order and compare status, the headers that matter and
the body, modulo call ids, approval ids, session ids, trace ids, times and durations.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import pytest
import yaml
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.support.governed import Governed, governed_gateway
from tests.support.tenant_contracts import tenant_contract

__all__ = [
    "PARAMS",
    "Served",
    "answer",
    "differences",
    "normal",
    "plain_and_sdk",
    "record",
    "sdk_client_results",
]

PARAMS = "acme__params__read_item"
"""A tool whose `item_id` argument is mirrored in an `Mcp-Param-Item` header (`x-mcp-header`)."""
READ, HIDDEN = "acme__items__read_item", "globex__items__read_item"


@dataclass
class Served:
    governed: Governed
    plain: list[Any] = field(default_factory=list)
    """The JSON-RPC ids the plain path served."""

    def http(self, sub: str = "alice") -> httpx2.Client:
        token = self.governed.token("admin", sub=sub)
        return httpx2.Client(base_url=self.governed.base_url, headers={"Authorization": f"Bearer {token}"})


def record(served: dict[str, Served], server: object, request_id: Any) -> None:
    """Note that the plain path of the gateway whose MCP server is `server` served `request_id`."""
    for entry in served.values():
        if entry.governed.running.gateway.mcp.server is server:
            entry.plain.append(request_id)


def _params_contract(directory: Path, backend_url: str) -> Path:
    contract = tenant_contract("acme", "params", backend_url).model_dump(mode="json", exclude_none=True)
    contract["endpoints"][0]["input_schema"]["properties"]["item_id"]["x-mcp-header"] = "Item"
    path = directory / "acme-params.yaml"
    path.write_text(yaml.safe_dump(contract, sort_keys=False))
    return path


@contextlib.contextmanager
def plain_and_sdk(tmp_path_factory: pytest.TempPathFactory, **server: Any) -> Iterator[dict[str, Served]]:
    """The gateway with plain calls (`on`) and the one without (`off`), each with the params tool;
    `server` sets other ServerSettings fields of both."""
    with (
        governed_gateway(tmp_path_factory.mktemp("on"), server={**server, "mcp_plain_calls": True}) as on,
        governed_gateway(tmp_path_factory.mktemp("off"), server={**server, "mcp_plain_calls": False}) as off,
    ):
        for governed in (on, off):
            contracts = governed.data_dir.parent / "contracts"
            backend_url = yaml.safe_load((contracts / "acme-items.yaml").read_text())["backend"]["base_url"]
            path = _params_contract(contracts, backend_url)
            governed.running.run(governed.running.gateway.publish_files([path]))
        yield {"on": Served(on), "off": Served(off)}


_ID = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\b[0-9a-f]{16,64}\b|\bap_[A-Za-z0-9_-]{20,}"
)
_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?")
_VARYING_NUMBERS = frozenset({"duration_ms", "backend_ms", "gateway_ms", "queue_ms", "elapsed_ms"})


def normal(value: Any, key: str | None = None) -> Any:
    """The answer without what differs between two runs of the same call (ids, times, durations)."""
    if isinstance(value, dict):
        return {k: normal(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [normal(v) for v in value]
    if isinstance(value, str):
        return _TIME.sub("<time>", _ID.sub("<id>", value))
    if isinstance(value, float) or (key in _VARYING_NUMBERS and isinstance(value, int)):
        return "<number>"
    return value


_COMPARED_HEADERS = ("content-type", "allow", "mcp-session-id", "www-authenticate", "retry-after")


_NUMBER = re.compile(r'(?<=":)-?\d+\.\d+(e[+-]?\d+)?|(?<=_ms":)\d+')


def answer(response: httpx2.Response) -> dict[str, Any]:
    """Status, header names in order, the headers that matter, the body parsed (to show where two
    differ) and as sent (so that key order and spacing count), without ids, times and durations."""
    try:
        body: Any = normal(response.json())
    except ValueError:
        body = None
    sent = _NUMBER.sub("<number>", _TIME.sub("<time>", _ID.sub("<id>", response.text)))
    names = [name for name in response.headers if name not in ("date", "content-length", "server")]
    kept = {name: normal(response.headers.get(name)) for name in _COMPARED_HEADERS}
    return {"status": response.status_code, "headers": names, "kept": kept, "body": body, "sent": sent}


def differences(got: Any, expected: Any, where: str = "") -> list[str]:
    """Where two answers differ, for the failure message."""
    if isinstance(got, dict) and isinstance(expected, dict):
        keys = list(dict.fromkeys([*expected, *got]))
        return [d for k in keys for d in differences(got.get(k), expected.get(k), f"{where}/{k}")]
    if got != expected:
        return [f"{where}: {got!r} != {expected!r}"]
    return []


async def sdk_client_results(both: dict[str, Served], mode: str) -> list[list[Any]]:
    """What the SDK's own client (in `mode`) gets from three calls on each gateway (off, then on):
    a success, a tool it may not see, a tool with a mirrored argument."""
    results = []
    for name in ("off", "on"):
        governed = both[name].governed
        token = governed.token("admin", sub="alice")
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30.0) as http,
            Client(streamable_http_client(governed.mcp_url, http_client=http), mode=mode) as client,
        ):
            called = [
                await client.call_tool(READ, {"item_id": "I-1"}),
                await client.call_tool(HIDDEN, {"item_id": "I-1"}),
                await client.call_tool(PARAMS, {"item_id": "I-2"}),
            ]
        results.append([normal(result.model_dump(mode="json")) for result in called])
    return results
