"""The page session at the HTTP edge, without a gateway: a fake authenticator, real edge and login.

Fast checks of what the loopback tests cannot reach: the cookie's `Secure` flag over https, and the
cookie never standing in for a credential outside the pages.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx2
import pytest
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import Scope

from colonnade.governance.principal import Principal, PrincipalKind
from colonnade.surfaces.edge import EdgeRefusal, HttpEdge, OriginPolicy, principal_of_scope
from colonnade.surfaces.pages import guard
from colonnade.surfaces.pages.login import Login
from colonnade.surfaces.pages.session_auth import with_page_sessions
from colonnade.surfaces.pages.sessions import PageSessions

ANN = Principal(PrincipalKind.USER, "ann")
accepted = {"Bearer good"}


async def authenticate(headers: Headers, scope: Scope) -> Principal | EdgeRefusal:
    if headers.get("authorization") in accepted:
        return ANN
    return EdgeRefusal("A-AUTH-MISSING", "this request needs a credential", 401)


async def who(request: Request) -> Response:
    return PlainTextResponse(principal_of_scope(request.scope).key)


@pytest.fixture
async def client() -> AsyncIterator[httpx2.AsyncClient]:
    sessions = PageSessions(600)
    login = Login(authenticate, sessions)
    routes = [Route("/ui/catalog", who), Route("/v1/tools", who), *login.routes()]
    edge = HttpEdge(
        Starlette(routes=routes),
        origins=OriginPolicy.for_bind("127.0.0.1", ["gw.example"], ["https://gw.example"]),
        renderers={"/": guard.render_refusal},
        authenticate=with_page_sessions(authenticate, sessions),
    )
    transport = httpx2.ASGITransport(app=edge)
    async with httpx2.AsyncClient(transport=transport, base_url="https://gw.example") as client:
        yield client


async def test_over_https_the_session_cookie_is_secure(client: httpx2.AsyncClient) -> None:
    form = await client.get("/ui/login")
    assert "secure" in form.headers["set-cookie"].lower()  # the login form's cookie too
    token = form.text.split('name="login_token" value="')[1].split('"')[0]
    done = await client.post(
        "/ui/login", data={"credential": "good", "login_token": token, "next": "/ui/catalog"}
    )
    assert done.status_code == 303
    cookie = done.headers["set-cookie"].lower()
    assert cookie.startswith("colonnade_session=") and "; secure" in cookie and "httponly" in cookie
    assert (await client.get("/ui/catalog")).text == "user:ann"
    assert (await client.get("/v1/tools")).status_code == 401  # the cookie is no credential there
    accepted.discard("Bearer good")
    try:
        ended = await client.get("/ui/catalog")
    finally:
        accepted.add("Bearer good")
    assert ended.status_code == 303 and "ended=A-AUTH-MISSING" in ended.headers["location"]
    assert (await client.get("/ui/catalog")).status_code == 303  # the session is gone for good
