"""The HTTP edge in front of every route: Host/Origin, body size and the caller, done once.

An ASGI app with one echo route per surface prefix, driven in-process: what the edge lets through,
what it refuses, and how each surface's refusals read.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx2
import pytest
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import Scope

from colonnade.governance.principal import ANONYMOUS_LOOPBACK, Principal, PrincipalKind
from colonnade.surfaces.edge import EdgeRefusal, HttpEdge, OriginPolicy, principal_of_scope
from colonnade.surfaces.pages.guard import render_refusal as page_refusal
from colonnade.surfaces.rest.routes import render_refusal as rest_refusal

LIMIT = 2048


class Seen:
    bodies: list[int]

    def __init__(self) -> None:
        self.bodies = []


def _app(seen: Seen, authenticate: object = None) -> HttpEdge:
    async def echo(request: Request) -> Response:
        body = await request.body()
        seen.bodies.append(len(body))
        principal = principal_of_scope(request.scope)
        return JSONResponse({"principal": principal.key, "bytes": len(body)})

    async def health(_: Request) -> Response:
        return PlainTextResponse("ok")

    routes = [
        Route(path, echo, methods=["GET", "POST"]) for path in ("/v1/calls", "/ui/catalog", "/mcp", "/other")
    ]
    inner = Starlette(routes=[*routes, Route("/healthz", health)])
    options: dict[str, object] = {}
    if authenticate is not None:
        options["authenticate"] = authenticate
    return HttpEdge(
        inner,
        origins=OriginPolicy.for_bind("127.0.0.1"),
        renderers={"/v1": rest_refusal, "/": page_refusal},
        max_request_bytes=LIMIT,
        **options,  # type: ignore[arg-type]
    )


@pytest.fixture
def seen() -> Seen:
    return Seen()


@pytest.fixture
async def client(seen: Seen) -> AsyncIterator[httpx2.AsyncClient]:
    transport = httpx2.ASGITransport(app=_app(seen))
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8765") as client:
        yield client


async def test_a_good_request_reaches_its_route_as_the_anonymous_loopback_caller(
    client: httpx2.AsyncClient, seen: Seen
) -> None:
    answer = await client.post("/v1/calls", json={"a": 1})
    assert answer.status_code == 200
    assert answer.json() == {"principal": ANONYMOUS_LOOPBACK.key, "bytes": len(b'{"a":1}')}


async def test_a_foreign_host_is_refused_on_every_route_in_each_surfaces_format(
    client: httpx2.AsyncClient, seen: Seen
) -> None:
    rebound = {"host": "attacker.example"}
    rest = await client.post("/v1/calls", json={}, headers=rebound)
    assert rest.status_code == 421 and rest.json()["error"]["code"] == "A-AUTH-ORIGIN"
    assert rest.json()["status"] == "terminal_error"  # a typed CallResult for call clients
    page = await client.get("/ui/catalog", headers=rebound)
    assert page.status_code == 421 and "text/html" in page.headers["content-type"]
    other = await client.get("/other", headers={"origin": "http://attacker.example"})
    assert other.status_code == 403
    assert seen.bodies == []
    assert (await client.get("/healthz", headers=rebound)).status_code == 200  # probes stay open


async def test_a_body_over_the_limit_never_reaches_the_route(client: httpx2.AsyncClient, seen: Seen) -> None:
    declared = await client.post("/mcp", content=b"x" * (LIMIT + 1))
    assert declared.status_code == 413

    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(LIMIT // 512 + 2):
            yield b"y" * 512

    streamed = await client.post("/v1/calls", content=chunks())
    assert streamed.status_code == 413 and streamed.json()["error"]["code"] == "I-REQ-TOO-LARGE"
    assert streamed.json()["error"]["details"]["limit_bytes"] == LIMIT
    assert seen.bodies == []  # the route never ran: it was cancelled while waiting for its body
    assert (await client.post("/v1/calls", content=b"z" * LIMIT)).status_code == 200


async def test_the_authenticator_decides_who_calls_or_refuses(seen: Seen) -> None:
    ann = Principal(PrincipalKind.USER, "ann")

    async def authenticate(headers: Headers, scope: Scope) -> Principal | EdgeRefusal:
        if headers.get("authorization") == "Bearer ann":
            return ann
        return EdgeRefusal("A-AUTH-ORIGIN", "no credential", 401, headers={"WWW-Authenticate": "Bearer"})

    transport = httpx2.ASGITransport(app=_app(seen, authenticate))
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8765") as client:
        accepted = await client.post("/v1/calls", json={}, headers={"authorization": "Bearer ann"})
        refused = await client.post("/v1/calls", json={})
    assert accepted.json()["principal"] == "user:ann"
    assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
    assert seen.bodies == [2]


async def test_a_direct_path_gets_the_checked_request_past_the_router(seen: Seen) -> None:
    """`direct` hands /mcp straight to its app after the same checks (Host/Origin, size, the
    caller); refusals still come from the edge, and other paths still go through the router."""
    served: list[tuple[str, bytes]] = []

    async def direct(scope: Scope, receive: object, send: object) -> None:
        request = Request(scope, receive)  # type: ignore[arg-type]
        served.append((principal_of_scope(scope).key, await request.body()))
        await PlainTextResponse("direct")(scope, receive, send)  # type: ignore[arg-type]

    edge = _app(seen)
    edge.direct = {"/mcp": direct}
    async with httpx2.AsyncClient(
        transport=httpx2.ASGITransport(app=edge), base_url="http://127.0.0.1:8765"
    ) as client:
        answer = await client.post("/mcp", content=b'{"a": 1}', headers={"content-type": "application/json"})
        assert answer.text == "direct"
        refused = await client.post("/mcp", json={}, headers={"host": "attacker.example"})
        assert refused.status_code == 421
        assert (await client.post("/mcp", content=b"x" * (LIMIT + 1))).status_code == 413
        assert (await client.post("/other", json={"b": 2})).json()["bytes"] == len(b'{"b":2}')
    assert served == [(ANONYMOUS_LOOPBACK.key, b'{"a": 1}')]
    assert seen.bodies == [len(b'{"b":2}')]


async def test_a_matched_path_gets_the_checked_request_past_the_router(seen: Seen) -> None:
    """`direct_match` names the app of a family of paths (the per-server endpoints); a path it does
    not match goes through the router, and refusals still come from the edge."""
    served: list[str] = []

    async def endpoint(scope: Scope, receive: object, send: object) -> None:
        served.append(scope["path"])
        await PlainTextResponse("matched")(scope, receive, send)  # type: ignore[arg-type]

    edge = _app(seen)
    edge.direct_match = lambda path: endpoint if path.startswith("/servers/") else None
    async with httpx2.AsyncClient(
        transport=httpx2.ASGITransport(app=edge), base_url="http://127.0.0.1:8765"
    ) as client:
        assert (await client.post("/servers/a/mcp", json={})).text == "matched"
        assert (
            await client.post("/servers/a/mcp", json={}, headers={"host": "evil.example"})
        ).status_code == 421
        assert (await client.post("/other", json={"b": 2})).json()["bytes"] == len(b'{"b":2}')
    assert served == ["/servers/a/mcp"]


async def test_a_direct_method_and_path_leaves_the_other_methods_to_the_router(seen: Seen) -> None:
    """A (method, path) entry, as the REST surface gives `POST /v1/calls`: that method goes past the
    router, checked like any request; another method of the path still meets the router's route."""
    served: list[bytes] = []

    async def direct(scope: Scope, receive: object, send: object) -> None:
        served.append(await Request(scope, receive).body())  # type: ignore[arg-type]
        await PlainTextResponse("direct")(scope, receive, send)  # type: ignore[arg-type]

    edge = _app(seen)
    edge.direct = {("POST", "/v1/calls"): direct}
    async with httpx2.AsyncClient(
        transport=httpx2.ASGITransport(app=edge), base_url="http://127.0.0.1:8765"
    ) as client:
        assert (await client.post("/v1/calls", json={"a": 1})).text == "direct"
        assert (await client.get("/v1/calls")).json()["bytes"] == 0  # the router's route
        refused = await client.post("/v1/calls", json={}, headers={"host": "attacker.example"})
        assert refused.status_code == 421
        assert (await client.post("/other", json={"b": 2})).json()["bytes"] == len(b'{"b":2}')
    assert served == [b'{"a":1}']
    assert seen.bodies == [0, len(b'{"b":2}')]
