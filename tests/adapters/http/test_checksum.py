"""Stated digests of a backend's body are checked: RFC 9530 Content-/Repr-Digest and Content-MD5."""

from __future__ import annotations

import base64
import hashlib

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from colonnade.adapters.http import HttpAdapter
from colonnade.adapters.http.checksum import digest_problem
from colonnade.adapters.outcome import OutcomeKind
from colonnade.catalog.http_binding import HttpBinding
from tests.support.loopback import serve_in_thread

BODY = b'{"id":"C-1001"}'


def _b64(algorithm: str, data: bytes) -> str:
    return base64.b64encode(hashlib.new(algorithm, data).digest()).decode()


@pytest.mark.parametrize(
    ("headers", "ok"),
    [
        ({}, True),
        ({"content-digest": f"sha-256=:{_b64('sha256', BODY)}:"}, True),
        ({"repr-digest": f"sha-512=:{_b64('sha512', BODY)}:"}, True),
        ({"content-digest": f"sha-256=:{_b64('sha256', b'other')}:"}, False),
        ({"content-md5": _b64("md5", BODY)}, True),
        ({"content-md5": _b64("md5", b"other")}, False),
        ({"content-digest": "unixsum=:AAAA:"}, True),  # unknown algorithms are not judged
        ({"content-digest": f"sha-256=:{_b64('sha256', b'x')}:", "content-encoding": "gzip"}, True),
    ],
)
def test_digest_problem(headers: dict[str, str], ok: bool) -> None:
    assert (digest_problem(headers, BODY) is None) is ok


async def test_adapter_refuses_a_body_that_breaks_its_digest() -> None:
    async def answer(request: Request) -> Response:
        stated = BODY if request.path_params["kind"] == "good" else b"tampered"
        headers = {"content-digest": f"sha-256=:{_b64('sha256', stated)}:"}
        return Response(BODY, media_type="application/json", headers=headers)

    app = Starlette(routes=[Route("/items/{kind}", answer)])
    with serve_in_thread(app) as url:
        async with HttpAdapter() as adapter:
            good = await adapter.execute(HttpBinding(url, "GET", "/items/good"), {})
            bad = await adapter.execute(HttpBinding(url, "GET", "/items/bad"), {})
    assert good.kind is OutcomeKind.SUCCESS and good.body == {"id": "C-1001"}
    assert bad.kind is OutcomeKind.TERMINAL_ERROR and bad.error_code == "D-DATA-CHECKSUM"
    assert "content-digest" in (bad.message or "")
