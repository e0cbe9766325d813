"""One input behaviour for JSON bodies at the HTTP edge: every case gets the same answer (status and
registry code) on REST `/v1/calls`, handshake-era MCP (`initialize`) and 2026-07-28 MCP (`tools/list`).
Real gateway app on loopback, real HTTP."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx2
import pytest

from colonnade.config import Settings
from colonnade.runtime.gateway import Gateway
from colonnade.surfaces.edge import DEFAULT_MAX_REQUEST_BYTES
from tests.support.loopback import serve_in_thread

JSON = "application/json"
BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class Surface:
    name: str
    path: str
    payload: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)

    def code_of(self, response: httpx2.Response) -> str | None:
        """The registry code of a refusal, None when the request was accepted and served."""
        body = _message(response)
        if self.path == "/v1/calls":
            code = body["error"]["code"] if body.get("error") else None
            return code if response.status_code != 200 else None
        return body["error"]["data"]["code"] if "error" in body else None


def _message(response: httpx2.Response) -> dict[str, Any]:
    """The one JSON message of an answer: a JSON body, or (an MCP session's calls answer over SSE)
    the data of its one `message` event."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
        messages = [json.loads(chunk) for chunk in data if chunk]
        assert len(messages) == 1, response.text
        message: dict[str, Any] = messages[0]
        return message
    answer: dict[str, Any] = response.json()
    return answer


SURFACES = [
    Surface("rest", "/v1/calls", {"tool_id": "acme:crm:nothing", "input": {}}),
    Surface(
        "mcp-2025-11-25",
        "/mcp",
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
    ),
    Surface(
        "mcp-2026-07-28",
        "/mcp",
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/list",
            "params": {
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                }
            },
        },
        {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/list"},
    ),
]


def _encoded(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload).encode()


def _with_keys(prefix: bytes) -> Any:
    """Prepend raw members (e.g. a repeated key) to the payload's top-level object."""
    return lambda payload: b"{" + prefix + b", " + _encoded(payload)[1:]


@dataclass(frozen=True)
class Case:
    name: str
    content_type: str | None
    body: Any  # payload -> bytes
    status: int | None  # None: accepted (the surface's own answer)
    code: str | None = None
    chunked: bool = False


CASES = [
    Case("json", JSON, _encoded, None),
    Case("json with charset=utf-8", "application/json; charset=UTF-8", _encoded, None),
    Case("json with quoted charset", 'application/json;charset="utf-8"', _encoded, None),
    Case("utf-8 byte-order mark is dropped", JSON, lambda p: BOM + _encoded(p), None),
    Case("charset latin-1", "application/json; charset=iso-8859-1", _encoded, 415, "I-REQ-MEDIA-TYPE"),
    Case("text/plain", "text/plain", _encoded, 415, "I-REQ-MEDIA-TYPE"),
    Case("no content type", None, _encoded, 415, "I-REQ-MEDIA-TYPE"),
    Case("a +json type", "application/vnd.api+json", _encoded, 415, "I-REQ-MEDIA-TYPE"),
    Case("form", "application/x-www-form-urlencoded", _encoded, 415, "I-REQ-MEDIA-TYPE"),
    Case("duplicate top-level key", JSON, _with_keys(b'"k": 1, "k": 2'), 400, "I-REQ-DUPLICATE-KEY"),
    Case(
        "duplicate nested key",
        JSON,
        _with_keys(b'"n": [{"a": {"k": 1, "k": 1}}]'),
        400,
        "I-REQ-DUPLICATE-KEY",
    ),
    Case("utf-16 with its bom", JSON, lambda p: json.dumps(p).encode("utf-16"), 400, "I-REQ-ENCODING"),
    Case("utf-16 without a bom", JSON, lambda p: json.dumps(p).encode("utf-16-le"), 400, "I-REQ-ENCODING"),
    Case("invalid utf-8", JSON, _with_keys(b'"k": "\xff"'), 400, "I-REQ-ENCODING"),
    Case(
        "over the limit",
        JSON,
        lambda p: _encoded(p) + b" " * DEFAULT_MAX_REQUEST_BYTES,
        413,
        "I-REQ-TOO-LARGE",
    ),
    Case(
        "over the limit, chunked",
        JSON,
        lambda p: _encoded(p) + b" " * DEFAULT_MAX_REQUEST_BYTES,
        413,
        "I-REQ-TOO-LARGE",
        chunked=True,
    ),
    Case("utf-8 bom, chunked", JSON, lambda p: BOM + _encoded(p), None, chunked=True),
]


@pytest.fixture(scope="module")
def client() -> Iterator[httpx2.Client]:
    gateway = Gateway(Settings())
    with (
        serve_in_thread(gateway.http_app(), lifespan="on") as url,
        httpx2.Client(base_url=url, timeout=30) as http,
    ):
        yield http


def _chunks(body: bytes) -> Iterator[bytes]:
    for start in range(0, len(body), 64 * 1024):
        yield body[start : start + 64 * 1024]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
@pytest.mark.parametrize("surface", SURFACES, ids=lambda surface: surface.name)
def test_one_input_behaviour_on_every_surface(client: httpx2.Client, surface: Surface, case: Case) -> None:
    headers = {"accept": "application/json, text/event-stream", **surface.headers}
    if case.content_type is not None:
        headers["content-type"] = case.content_type
    body: bytes = case.body(surface.payload)
    content: Any = _chunks(body) if case.chunked else body
    response = client.post(surface.path, content=content, headers=headers)
    if case.status is None:
        assert response.status_code == 200, response.text[:300]
        assert surface.code_of(response) is None
        return
    assert (response.status_code, surface.code_of(response)) == (case.status, case.code), response.text[:300]


def test_a_refusal_names_the_repeated_key_on_both_surfaces(client: httpx2.Client) -> None:
    body = b'{"jsonrpc": "2.0", "id": 1, "id": 2, "method": "ping"}'
    mcp = client.post("/mcp", content=body, headers={"content-type": JSON, "accept": "application/json"})
    rest = client.post(
        "/v1/calls", content=b'{"tool_id": "a", "tool_id": "b"}', headers={"content-type": JSON}
    )
    assert mcp.json()["error"]["data"]["details"] == {"key": "id"}
    assert rest.json()["error"]["details"] == {"key": "tool_id"}


def test_a_bodiless_post_needs_no_content_type(client: httpx2.Client) -> None:
    response = client.post("/v1/calls")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "I-REQ-ENVELOPE"  # the body is empty: the surface says so
