"""The plain-call path in a handshake-era session of /mcp answers exactly as the MCP SDK's session does.

Two governed gateways (`tests/support/mcp_differential.py`), one with `server.mcp_plain_calls` on
and one with it off, open the same 2025-11-25 sessions and get the same raw HTTP requests in the
same order: plain calls that succeed or fail in the pipeline or in the SDK's runner, and every
request the plain path must leave to the SDK (another session's or principal's, an uninitialized
session, header and body defects, progress tokens, a session that set a log level, a client that
can be asked, other methods). Status, the headers that matter and the body must match, modulo
ids, times and durations, and the plain path must have served exactly the requests it should
have. A call cancelled by `notifications/cancelled`, and one whose session is deleted meanwhile,
end as the SDK ends them; a call in flight holds its session (idle timer, session table) as the
SDK's does.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx2
import pytest

from colonnade.surfaces.mcp.session_plain_call import PlainSessionTransport
from tests.support.mcp_differential import (
    PARAMS,
    Served,
    answer,
    differences,
    plain_and_sdk,
    record,
    sdk_client_results,
)

VERSION = "2025-11-25"
READ, WRITE, DROP = "acme__items__read_item", "acme__items__write_item", "acme__items__drop_item"
HIDDEN = "globex__items__read_item"
BOTH = "application/json, text/event-stream"
SESSIONS: dict[str, dict[str, Any]] = {
    "main": {},
    "logging": {},
    "roots": {"roots": {"listChanged": True}},
    "sampling": {"sampling": {}},
}
"""The sessions each gateway opens, with the capabilities their clients declare."""


@pytest.fixture(scope="module")
def gateways(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Served]]:
    """Both gateways, and a record of what the plain path served."""
    served: dict[str, Served] = {}
    serve = PlainSessionTransport._serve

    async def recording(transport: PlainSessionTransport, calls: Any, call: Any, *rest: Any) -> None:
        record(served, calls.server, call.request_id)
        await serve(transport, calls, call, *rest)

    with pytest.MonkeyPatch.context() as patch, plain_and_sdk(tmp_path_factory) as both:
        patch.setattr(PlainSessionTransport, "_serve", recording)
        served.update(both)
        yield served


def _headers(session: str | None, **changes: str | None) -> list[tuple[str, str]]:
    headers: dict[str, str | None] = {
        "content-type": "application/json",
        "accept": BOTH,
        "mcp-protocol-version": VERSION,
        "mcp-session-id": session,
        **{name.replace("_", "-"): value for name, value in changes.items()},
    }
    return [(name, value) for name, value in headers.items() if value is not None]


def _call(rid: Any, tool: Any, arguments: Any = None, **params: Any) -> dict[str, Any]:
    body = {"name": tool, **({} if arguments is None else {"arguments": arguments}), **params}
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": body}


def _initialize(capabilities: dict[str, Any]) -> dict[str, Any]:
    params = {
        "protocolVersion": VERSION,
        "capabilities": capabilities,
        "clientInfo": {"name": "differential", "version": "1"},
    }
    return {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}


def _post(client: httpx2.Client, body: Any, headers: list[tuple[str, str]]) -> httpx2.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return client.post("/mcp", content=content, headers=headers)


@dataclass
class Opened:
    """One gateway's sessions, and the answers that opened them."""

    ids: dict[str, str] = field(default_factory=dict)
    answers: list[dict[str, Any]] = field(default_factory=list)


def _open_sessions(client: httpx2.Client) -> Opened:
    opened = Opened()
    for name, capabilities in SESSIONS.items():
        opened.ids[name] = _open(client, capabilities, opened.answers)
    level = {"jsonrpc": "2.0", "id": 0, "method": "logging/setLevel", "params": {"level": "info"}}
    opened.answers.append(answer(_post(client, level, _headers(opened.ids["logging"]))))
    # A session opened by a tool call: the SDK keeps it (the answer is an error with status 200).
    response = _post(client, _call(0, READ, {"item_id": "I-1"}), _headers(None))
    opened.ids["uninitialized"] = response.headers["mcp-session-id"]
    opened.answers.append(answer(response))
    opened.ids["unknown"] = "0123456789abcdef0123456789abcdef"
    return opened


def _open(client: httpx2.Client, capabilities: dict[str, Any], answers: list[dict[str, Any]]) -> str:
    """An initialized session of a client declaring `capabilities` (the answers go to `answers`)."""
    response = _post(client, _initialize(capabilities), _headers(None))
    session = response.headers["mcp-session-id"]
    ready = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    answers += [answer(response), answer(_post(client, ready, _headers(session)))]
    return session


@dataclass(frozen=True)
class Case:
    name: str
    body: Any
    plain: bool
    """Whether the plain path serves it (else the SDK's session does)."""
    session: str = "main"
    sub: str = "alice"
    headers: dict[str, str | None] = field(default_factory=dict)
    method: str = "POST"


def _corpus() -> list[Case]:
    item = {"item_id": "I-1"}
    json_only = {"accept": "application/json"}
    return [
        Case("success", _call(1, READ, item), True),
        Case("string id", _call("s-2", READ, item), True),
        Case("invalid arguments", _call(3, READ, {"item_id": 5}), True),
        Case("missing argument", _call(4, READ, {}), True),
        Case("unknown tool", _call(5, "acme__items__nope", item), True),
        Case("hidden tool", _call(6, HIDDEN, item), True),
        Case("envelope error", _call(7, READ, item, _meta={"colonnade/request": {"bogus": 1}}), True),
        Case(
            "dry run",
            _call(8, WRITE, {"item_id": "A-2", "value": "v"}, _meta={"colonnade/dry_run": True}),
            True,
        ),
        Case("approval: pending", _call(9, DROP, {"item_id": "D-1"}), True),
        Case("no arguments", _call(10, READ), True),
        Case("arguments not an object", _call(11, READ, ["I-1"]), True),
        Case("name not a string", _call(12, 7), True),
        Case(
            "no protocol-version header", _call(13, READ, item), True, headers={"mcp_protocol_version": None}
        ),
        Case("Accept */*", _call(14, READ, item), True, headers={"accept": "*/*"}),
        Case("Accept JSON only", _call(15, READ, item), True, headers=json_only),
        Case(
            "an Mcp-Param header (not this era's)",
            _call(16, PARAMS, {"item_id": "P-1"}),
            True,
            headers={"mcp_param_item": "P-2"},
        ),
        Case("another _meta", _call(17, READ, item, _meta={"example.com/trace": "t"}), True),
        Case(
            "Content-Type with a charset",
            _call(18, READ, item),
            True,
            headers={"content_type": "application/json; charset=utf-8"},
        ),
        Case("unknown session", _call(20, READ, item), False, session="unknown"),
        Case("another principal's session", _call(21, READ, item), False, sub="bob"),
        Case("uninitialized session", _call(22, READ, item), False, session="uninitialized"),
        Case("no session header", _call(23, READ, item), False, session="none"),
        Case("Accept SSE only", _call(24, READ, item), False, headers={"accept": "text/event-stream"}),
        Case("empty Accept", _call(25, READ, item), False, headers={"accept": ""}),
        Case("Content-Type text/plain", _call(26, READ, item), False, headers={"content_type": "text/plain"}),
        Case("progress token", _call(27, READ, item, _meta={"progressToken": "p-1"}), False),
        Case(
            "progress token, JSON only",
            _call(28, READ, item, _meta={"progressToken": "p-2"}),
            False,
            headers=json_only,
        ),
        Case("after logging/setLevel", _call(29, READ, item), False, session="logging"),
        Case(
            "after logging/setLevel, JSON only",
            _call(30, READ, item),
            False,
            session="logging",
            headers=json_only,
        ),
        Case("a client that declared roots", _call(31, READ, item), False, session="roots"),
        Case("a client that declared sampling", _call(32, READ, item), False, session="sampling"),
        Case("_meta null", _call(33, READ, item, _meta=None), False),
        Case("batch", [_call(34, READ, item), _call(35, READ, item)], False),
        Case("null id", _call(None, READ, item), False),
        Case("an extra member", {**_call(36, READ, item), "extra": 1}, False),
        Case("wrong jsonrpc version", {**_call(37, READ, item), "jsonrpc": "1.0"}, False),
        Case("malformed JSON", b'{"jsonrpc": "2.0", "id": 38, "method": "tools/call",', False),
        Case(
            "a notification",
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 999}},
            False,
        ),
        Case("tools/list", {"jsonrpc": "2.0", "id": 39, "method": "tools/list"}, False),
        Case("initialize again", {**_initialize({}), "id": 40}, False),
        Case("ping", {"jsonrpc": "2.0", "id": 41, "method": "ping"}, False),
        Case("a plain call after all that", _call(42, READ, item), True),
        Case("DELETE", None, False, session="roots", method="DELETE"),
        Case("after DELETE", _call(43, READ, item), False, session="roots"),
    ]


def _send(clients: Callable[[str], httpx2.Client], opened: Opened, case: Case) -> httpx2.Response:
    session = opened.ids.get(case.session)
    headers = _headers(session, **case.headers)
    client = clients(case.sub)
    if case.method == "DELETE":
        return client.delete("/mcp", headers=headers)
    return _post(client, case.body, headers)


@pytest.fixture(scope="module")
def clients(gateways: dict[str, Served]) -> Iterator[dict[str, Callable[[str], httpx2.Client]]]:
    """An HTTP client per gateway and principal."""
    made: dict[tuple[str, str], httpx2.Client] = {}

    def of(name: str) -> Callable[[str], httpx2.Client]:
        def client(sub: str) -> httpx2.Client:
            if (name, sub) not in made:
                made[name, sub] = gateways[name].http(sub)
            return made[name, sub]

        return client

    yield {name: of(name) for name in gateways}
    for client in made.values():
        client.close()


def test_every_answer_is_the_sdks(
    gateways: dict[str, Served], clients: dict[str, Callable[[str], httpx2.Client]]
) -> None:
    on, off = gateways["on"], gateways["off"]
    to_on, to_off = clients["on"], clients["off"]
    opened_off, opened_on = _open_sessions(to_off("alice")), _open_sessions(to_on("alice"))
    assert opened_on.answers == opened_off.answers
    before = len(on.plain)
    corpus = _corpus()
    for case in corpus:
        expected, got = answer(_send(to_off, opened_off, case)), answer(_send(to_on, opened_on, case))
        assert got == expected, (case.name, differences(got, expected))
    assert on.plain[before:] == [case.body["id"] for case in corpus if case.plain]
    assert off.plain == []


def _slow_call(client: httpx2.Client, session: str, rid: int, *, delete: bool) -> tuple[httpx2.Response, ...]:
    """A call the backend answers after 3 s and, half a second into it, its cancellation (or the
    session's end): both answers, and whether the call ended before the backend answered."""
    answered: list[httpx2.Response] = []
    call = _call(rid, READ, {"item_id": "S-1", "fault": "slow:3000"})
    thread = threading.Thread(target=lambda: answered.append(_post(client, call, _headers(session))))
    started = time.monotonic()
    thread.start()
    time.sleep(0.5)
    if delete:
        done = client.delete("/mcp", headers=_headers(session))
    else:
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": rid}}
        done = _post(client, cancel, _headers(session))
    thread.join(timeout=10)
    assert time.monotonic() - started < 2.5, "the call ran to its end"
    return answered[0], done


@pytest.mark.parametrize("delete", [False, True], ids=["notifications/cancelled", "DELETE"])
def test_a_call_ended_meanwhile_ends_as_the_sdks_does(
    gateways: dict[str, Served], clients: dict[str, Callable[[str], httpx2.Client]], delete: bool
) -> None:
    """A call cancelled by its client gets the SDK's `Request cancelled`; one whose session the
    client deletes meanwhile, the SDK's 500."""
    rid = 71 if delete else 70
    results = []
    for name in ("off", "on"):
        client = clients[name]("alice")
        called, done = _slow_call(client, _open_sessions(client).ids["main"], rid, delete=delete)
        results.append((answer(called), answer(done)))
    assert results[0] == results[1], differences(results[1], results[0])
    if delete:
        assert results[1][0]["status"] == 500
    else:
        assert results[1][0]["body"]["error"]["code"] == -32800
    assert gateways["on"].plain[-1] == rid


async def test_the_sdk_client_gets_the_same_results(gateways: dict[str, Served]) -> None:
    results = await sdk_client_results(gateways, "legacy")
    assert results[0] == results[1]
    assert not results[1][0]["is_error"] and results[1][1]["is_error"]
    assert len(gateways["on"].plain) >= 3


def _held_while_in_flight(served: Served) -> tuple[Any, ...]:
    """A 1.8 s call in a session that idles out after 0.6 s, for a caller allowed one session: the
    sessions held 1 s into it, the answer to opening another, the call's, the sessions held once it
    is over and idle, the answer to a call in it then, and what the plain path served."""
    plain: list[Any] = []
    serve = PlainSessionTransport._serve

    async def recording(transport: PlainSessionTransport, calls: Any, call: Any, *rest: Any) -> None:
        plain.append(call.request_id)
        await serve(transport, calls, call, *rest)

    ledger = served.governed.running.gateway.sessions
    with served.http() as client, pytest.MonkeyPatch.context() as patch:
        patch.setattr(PlainSessionTransport, "_serve", recording)
        session = _open(client, {}, [])
        call = _call(80, READ, {"item_id": "I-1", "fault": "slow:1800"})
        answered: list[httpx2.Response] = []
        thread = threading.Thread(target=lambda: answered.append(_post(client, call, _headers(session))))
        thread.start()
        time.sleep(1.0)  # past the idle timeout, the call still running
        held = ledger.held()
        another = _post(client, _initialize({}), _headers(None))
        thread.join(timeout=10)
        deadline = time.monotonic() + 5
        while ledger.held() and time.monotonic() < deadline:
            time.sleep(0.05)
        after = _post(client, _call(81, READ, {"item_id": "I-1"}), _headers(session))
    return held, answer(another), answer(answered[0]), ledger.held(), answer(after), plain


def test_a_call_in_flight_holds_its_session_as_the_sdks_does(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """While a plain call runs, its session neither expires (idle timer) nor is closed to make room
    for the caller's next one (the session table's in-flight count); once it is over, it expires."""
    with plain_and_sdk(tmp_path_factory, mcp_session_idle_s=0.6, max_mcp_sessions_per_caller=1) as both:
        off, on = _held_while_in_flight(both["off"]), _held_while_in_flight(both["on"])
    assert on[:5] == off[:5], differences(on[:5], off[:5])
    held, another, called, left, after, plain = on
    assert held == 1 and another["status"] == 503
    assert called["status"] == 200 and '"isError":false' in called["sent"]
    assert (left, after["status"]) == (0, 404)
    assert plain == [80] and off[5] == []
