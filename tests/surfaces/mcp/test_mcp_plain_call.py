"""The plain-call path at /mcp answers exactly as the MCP SDK's transport does.

Two governed gateways (issuer, backend, SQLite store, approvals, two tenants) on loopback, one with
`server.mcp_plain_calls` on and one with it off, get the same corpus of raw HTTP requests in the same
order: plain calls that succeed or fail in the pipeline, envelope errors, a dry run, an approval's
confirmation round, and every kind of request the plain path must hand to the SDK (header and body
defects, other methods, progress tokens, batches, notifications). Status, the headers that matter
and the JSON body must match, modulo call ids, approval ids, trace ids, times and durations; the
plain path must have served exactly the requests it should have.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx2
import pytest

import colonnade.surfaces.mcp.sessions as sessions
from colonnade.surfaces.mcp.confirmation import CONFIRM_KEY
from colonnade.surfaces.mcp.plain_call import serve_plain_call
from tests.support.mcp_differential import (
    PARAMS,
    Served,
    answer,
    differences,
    normal,
    plain_and_sdk,
    record,
    sdk_client_results,
)

VERSION = "2026-07-28"
READ, WRITE, DROP = "acme__items__read_item", "acme__items__write_item", "acme__items__drop_item"
HIDDEN = "globex__items__read_item"
ELICITS: dict[str, Any] = {"elicitation": {"form": {}}}


@pytest.fixture(scope="module")
def gateways(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Served]]:
    """Both gateways, and a record of what the plain path served (it is looked up per request)."""
    served: dict[str, Served] = {}

    async def recording(server: Any, state: Any, call: Any, *rest: Any) -> None:
        record(served, server, call.request_id)
        await serve_plain_call(server, state, call, *rest)

    with pytest.MonkeyPatch.context() as patch, plain_and_sdk(tmp_path_factory) as both:
        patch.setattr(sessions, "serve_plain_call", recording)
        served.update(both)
        yield served


def _meta(capabilities: dict[str, Any] | None = None, /, **extra: Any) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": capabilities or {},
        "io.modelcontextprotocol/clientInfo": {"name": "differential", "version": "1"},
        **extra,
    }


def _call(rid: Any, tool: str, arguments: Any, **params: Any) -> dict[str, Any]:
    body = {"name": tool, "arguments": arguments, "_meta": _meta(), **params}
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": body}


def _headers(tool: str | None, method: str = "tools/call", **changes: str | None) -> list[tuple[str, str]]:
    headers: dict[str, str | None] = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": VERSION,
        "mcp-method": method,
        "mcp-name": tool,
        **{name.replace("_", "-"): value for name, value in changes.items()},
    }
    return [(name, value) for name, value in headers.items() if value is not None]


@dataclass(frozen=True)
class Case:
    name: str
    body: Any
    headers: list[tuple[str, str]]
    plain: bool
    """Whether the plain path serves it (else the SDK's transport does)."""


def _corpus() -> list[Case]:
    meta_with = _meta
    return [
        Case("success", _call(1, READ, {"item_id": "I-1"}), _headers(READ), True),
        Case("string id", _call("s-2", READ, {"item_id": "I-1"}), _headers(READ), True),
        Case("invalid arguments", _call(3, READ, {"item_id": 5}), _headers(READ), True),
        Case("missing argument", _call(4, READ, {}), _headers(READ), True),
        Case(
            "unknown tool",
            _call(5, "acme__items__nope", {"item_id": "I-1"}),
            _headers("acme__items__nope"),
            True,
        ),
        Case("hidden tool", _call(6, HIDDEN, {"item_id": "I-1"}), _headers(HIDDEN), True),
        Case(
            "envelope error",
            {
                **_call(7, READ, {"item_id": "I-1"}),
                "params": {
                    "name": READ,
                    "arguments": {"item_id": "I-1"},
                    "_meta": meta_with(**{"colonnade/request": {"bogus": 1}}),
                },
            },
            _headers(READ),
            True,
        ),
        Case(
            "envelope constraint of the wrong type",
            {
                "jsonrpc": "2.0",
                "id": 8,
                "method": "tools/call",
                "params": {
                    "name": READ,
                    "arguments": {"item_id": "I-1"},
                    "_meta": meta_with(**{"colonnade/request": {"constraints": {"timeout_ms": "x"}}}),
                },
            },
            _headers(READ),
            True,
        ),
        Case(
            "dry run",
            {
                "jsonrpc": "2.0",
                "id": 9,
                "method": "tools/call",
                "params": {
                    "name": WRITE,
                    "arguments": {"item_id": "A-2", "value": "v"},
                    "_meta": meta_with(**{"colonnade/dry_run": True}),
                },
            },
            _headers(WRITE),
            True,
        ),
        Case(
            "approval without elicitation: pending", _call(10, DROP, {"item_id": "D-1"}), _headers(DROP), True
        ),
        Case(
            "approval with elicitation: input_required",
            {
                "jsonrpc": "2.0",
                "id": 11,
                "method": "tools/call",
                "params": {"name": DROP, "arguments": {"item_id": "D-2"}, "_meta": meta_with(ELICITS)},
            },
            _headers(DROP),
            True,
        ),
        Case(
            "a request_state naming no approval",
            _call(
                12,
                DROP,
                {"item_id": "D-3"},
                requestState="colonnade-approval:nope",
                inputResponses={CONFIRM_KEY: {"action": "accept", "content": {"confirm": True}}},
            ),
            _headers(DROP),
            True,
        ),
        Case(
            "a session id besides the modern version",
            _call(43, READ, {"item_id": "I-1"}),
            _headers(READ, mcp_session_id="0123456789abcdef0123456789abcdef"),
            False,
        ),
        Case("no arguments", _call(13, READ, None), _headers(READ), True),
        Case(
            "mcp-param agrees",
            _call(14, PARAMS, {"item_id": "P-1"}),
            _headers(PARAMS, mcp_param_item="P-1"),
            True,
        ),
        Case("mcp-param missing", _call(15, PARAMS, {"item_id": "P-1"}), _headers(PARAMS), False),
        Case(
            "mcp-param differs",
            _call(16, PARAMS, {"item_id": "P-1"}),
            _headers(PARAMS, mcp_param_item="P-2"),
            False,
        ),
        Case(
            "mcp-param duplicated",
            _call(17, PARAMS, {"item_id": "P-1"}),
            [*_headers(PARAMS, mcp_param_item="P-1"), ("mcp-param-item", "P-1")],
            False,
        ),
        Case("mcp-name differs", _call(18, READ, {"item_id": "I-1"}), _headers(WRITE), False),
        Case("mcp-name missing", _call(19, READ, {"item_id": "I-1"}), _headers(None), False),
        Case("mcp-method differs", _call(20, READ, {"item_id": "I-1"}), _headers(READ, "tools/list"), False),
        Case(
            "routing header twice",
            _call(21, READ, {"item_id": "I-1"}),
            [*_headers(READ), ("mcp-name", READ)],
            False,
        ),
        Case(
            "no protocol-version header",
            _call(22, READ, {"item_id": "I-1"}),
            _headers(READ, mcp_protocol_version=None),
            False,
        ),
        Case(
            "handshake-era header",
            _call(23, READ, {"item_id": "I-1"}),
            _headers(READ, mcp_protocol_version="2025-11-25"),
            False,
        ),
        Case(
            "unknown version header",
            _call(24, READ, {"item_id": "I-1"}),
            _headers(READ, mcp_protocol_version="2027-01-01"),
            False,
        ),
        Case(
            "body version differs from the header",
            {
                **_call(25, READ, {"item_id": "I-1"}),
                "params": {
                    "name": READ,
                    "arguments": {"item_id": "I-1"},
                    "_meta": {**_meta(), "io.modelcontextprotocol/protocolVersion": "2027-01-01"},
                },
            },
            _headers(READ),
            False,
        ),
        Case(
            "no envelope in _meta",
            {
                "jsonrpc": "2.0",
                "id": 26,
                "method": "tools/call",
                "params": {"name": READ, "arguments": {"item_id": "I-1"}},
            },
            _headers(READ),
            False,
        ),
        Case(
            "Accept without JSON",
            _call(27, READ, {"item_id": "I-1"}),
            _headers(READ, accept="text/event-stream"),
            False,
        ),
        Case("empty Accept", _call(28, READ, {"item_id": "I-1"}), _headers(READ, accept=""), False),
        Case("Accept */*", _call(29, READ, {"item_id": "I-1"}), _headers(READ, accept="*/*"), True),
        Case(
            "Accept application/*;q=0.5",
            _call(30, READ, {"item_id": "I-1"}),
            _headers(READ, accept="application/*;q=0.5"),
            True,
        ),
        Case(
            "Content-Type text/plain",
            _call(31, READ, {"item_id": "I-1"}),
            _headers(READ, content_type="text/plain"),
            False,
        ),
        Case(
            "malformed JSON", b'{"jsonrpc": "2.0", "id": 32, "method": "tools/call",', _headers(READ), False
        ),
        Case(
            "batch",
            [_call(33, READ, {"item_id": "I-1"}), _call(34, READ, {"item_id": "I-1"})],
            _headers(READ),
            False,
        ),
        Case(
            "notification",
            {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": 1, "_meta": _meta()},
            },
            _headers(None, "notifications/cancelled"),
            False,
        ),
        Case(
            "unknown method",
            {
                "jsonrpc": "2.0",
                "id": 35,
                "method": "tools/frobnicate",
                "params": {"name": READ, "_meta": _meta()},
            },
            _headers(None, "tools/frobnicate"),
            False,
        ),
        Case(
            "tools/list",
            {"jsonrpc": "2.0", "id": 36, "method": "tools/list", "params": {"_meta": _meta()}},
            _headers(None, "tools/list"),
            False,
        ),
        Case(
            "progress token",
            {
                **_call(37, READ, {"item_id": "I-1"}),
                "params": {
                    "name": READ,
                    "arguments": {"item_id": "I-1"},
                    "_meta": _meta(progressToken="p-1"),
                },
            },
            _headers(READ),
            False,
        ),
        Case("arguments not an object", _call(38, READ, ["I-1"]), _headers(READ), False),
        Case(
            "name not a string",
            {"jsonrpc": "2.0", "id": 39, "method": "tools/call", "params": {"name": 7, "_meta": _meta()}},
            _headers("7"),
            False,
        ),
        Case("null id", _call(None, READ, {"item_id": "I-1"}), _headers(READ), False),
        Case("an extra member", {**_call(40, READ, {"item_id": "I-1"}), "extra": 1}, _headers(READ), False),
        Case(
            "wrong jsonrpc version",
            {**_call(41, READ, {"item_id": "I-1"}), "jsonrpc": "1.0"},
            _headers(READ),
            False,
        ),
        Case(
            "invalid params for the SDK's model",
            _call(42, READ, {"item_id": "I-1"}, requestState=5),
            _headers(READ),
            True,
        ),
    ]


def _send(client: httpx2.Client, case: Case) -> httpx2.Response:
    content = case.body if isinstance(case.body, bytes) else json.dumps(case.body).encode()
    return client.post("/mcp", content=content, headers=case.headers)


def test_every_answer_is_the_sdks(gateways: dict[str, Served]) -> None:
    on, off = gateways["on"], gateways["off"]
    corpus = _corpus()
    with on.http() as to_on, off.http() as to_off:
        for case in corpus:
            expected, got = answer(_send(to_off, case)), answer(_send(to_on, case))
            assert got == expected, (case.name, differences(got, expected))
    rid = {case.name: case.body.get("id") if isinstance(case.body, dict) else None for case in corpus}
    assert on.plain == [rid[case.name] for case in corpus if case.plain]
    assert off.plain == []


def test_the_confirmation_round_ends_pending_on_both_paths(gateways: dict[str, Served]) -> None:
    """2026-07-28: the client's retry with the user's answer and the state it was handed."""
    answers = []
    for name in ("off", "on"):
        served = gateways[name]
        first = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": DROP, "arguments": {"item_id": "R-1"}, "_meta": _meta(ELICITS)},
        }
        with served.http() as client:
            asked = client.post("/mcp", json=first, headers=_headers(DROP)).json()["result"]
            assert asked["resultType"] == "input_required", asked
            retry = _call(
                2,
                DROP,
                {"item_id": "R-1"},
                requestState=asked["requestState"],
                inputResponses={CONFIRM_KEY: {"action": "accept", "content": {"confirm": True}}},
            )
            retry["params"]["_meta"] = _meta(ELICITS)
            answered = client.post("/mcp", json=retry, headers=_headers(DROP))
        envelope = answered.json()["result"]["_meta"]["colonnade/result"]
        assert envelope["status"] == "pending", envelope
        answers.append((normal(asked), answer(answered)))
    assert answers[0] == answers[1]
    assert gateways["on"].plain[-2:] == [1, 2]


async def test_the_sdk_client_gets_the_same_results(gateways: dict[str, Served]) -> None:
    results = await sdk_client_results(gateways, "auto")
    assert results[0] == results[1]
    assert not results[1][0]["is_error"] and results[1][1]["is_error"]
