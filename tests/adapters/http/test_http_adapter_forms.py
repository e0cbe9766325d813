"""Form-encoded and multipart bodies on the wire, as a real loopback backend (Starlette) parses them."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator
from typing import Any

import pytest

from colonnade.adapters.http import HttpAdapter
from colonnade.adapters.outcome import SCHEMA, OutcomeKind
from colonnade.catalog.http_binding import HttpBinding, ParamLocation, ParamSpec
from tests.adapters.raw_server import OK, Exchange, RawServer

FORM = "application/x-www-form-urlencoded"
MULTIPART = "multipart/form-data"
PNG = bytes([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0xFF])


@pytest.fixture
async def adapter() -> AsyncIterator[HttpAdapter]:
    async with HttpAdapter(default_timeout_s=5) as adapter:
        yield adapter


def form(url: str, media: str, *params: ParamSpec) -> HttpBinding:
    return HttpBinding(base_url=url, method="POST", path="/form-echo", params=params, body_media_type=media)


def body(name: str, wire: str | None = None, file: str | None = None) -> ParamSpec:
    return ParamSpec(name, ParamLocation.BODY, wire or name, file)


async def echoed(adapter: HttpAdapter, binding: HttpBinding, arguments: dict[str, Any]) -> dict[str, Any]:
    outcome = await adapter.execute(binding, arguments)
    assert outcome.kind is OutcomeKind.SUCCESS, outcome
    assert isinstance(outcome.body, dict)
    return outcome.body


async def test_urlencoded_fields_scalars_arrays_and_objects(adapter: HttpAdapter, backend_url: str) -> None:
    binding = form(
        backend_url, FORM, body("to", "To"), body("events", "StatusCallbackEvent"), body("live"),
        body("amount"), body("metadata"), body("note"), body("items"),
    )
    got = await echoed(
        adapter,
        binding,
        {
            "to": "+1 555 0100",
            "events": ["initiated", "ringing"],
            "live": False,
            "amount": 12.5,
            "metadata": {"order": "A-1", "tags": ["x", "y"], "nested": {"deep": True}},
            "note": None,
            "items": [{"price": "p_1", "quantity": 2}],
        },
    )
    assert got["content_type"] == FORM
    assert got["fields"] == [
        ["To", "+1 555 0100"],
        ["StatusCallbackEvent", "initiated"],
        ["StatusCallbackEvent", "ringing"],
        ["live", "false"],
        ["amount", "12.5"],
        ["metadata[order]", "A-1"],
        ["metadata[tags][0]", "x"],
        ["metadata[tags][1]", "y"],
        ["metadata[nested][deep]", "true"],
        ["items[0][price]", "p_1"],
        ["items[0][quantity]", "2"],
    ]
    assert "%20" in got["raw"] and "+" not in got["raw"].replace("%2B", "")  # spaces as %20, + escaped


async def test_a_raw_body_object_is_the_form_and_a_non_object_is_refused(
    adapter: HttpAdapter, backend_url: str
) -> None:
    binding = form(backend_url, FORM, ParamSpec("body", ParamLocation.RAW_BODY, "body"))
    got = await echoed(adapter, binding, {"body": {"Body": "hi", "From": "me"}})
    assert got["fields"] == [["Body", "hi"], ["From", "me"]]
    refused = await adapter.execute(binding, {"body": ["not", "fields"]})
    assert refused.kind is OutcomeKind.TERMINAL_ERROR and refused.error_code == SCHEMA
    assert "must be an object" in (refused.message or "")


async def test_no_body_arguments_send_no_body(adapter: HttpAdapter, backend_url: str) -> None:
    got = await echoed(adapter, form(backend_url, FORM, body("note")), {})
    assert got["content_type"] == "" and got["raw"] == ""


async def test_multipart_parts_text_json_and_a_file_from_base64(
    adapter: HttpAdapter, backend_url: str
) -> None:
    binding = form(
        backend_url, MULTIPART, body("purpose"), body("file", file="image/png"), body("meta"), body("tags"),
        body("count"),
    )
    got = await echoed(
        adapter,
        binding,
        {
            "purpose": "identity_document",
            "file": base64.b64encode(PNG).decode(),
            "meta": {"a": 1},
            "tags": ["x", "y"],
            "count": 3,
        },
    )
    assert got["media_type"] == MULTIPART and "boundary=" in got["content_type"]
    assert got["fields"] == [
        ["purpose", "identity_document"], ["meta", '{"a":1}'], ["tags", "x"], ["tags", "y"], ["count", "3"]
    ]
    png = base64.b64encode(PNG).decode()
    assert got["files"] == [{"name": "file", "filename": "file", "content_type": "image/png", "base64": png}]


async def test_a_file_that_is_not_base64_is_refused_before_sending(
    adapter: HttpAdapter, backend_url: str
) -> None:
    outcome = await adapter.execute(
        form(backend_url, MULTIPART, body("file", file="application/pdf")), {"file": "not base64!"}
    )
    assert outcome.kind is OutcomeKind.TERMINAL_ERROR and outcome.error_code == SCHEMA
    assert "'file'" in (outcome.message or "") and "base64" in (outcome.message or "")


async def test_json_stays_the_default(adapter: HttpAdapter, backend_url: str) -> None:
    binding = HttpBinding(base_url=backend_url, method="POST", path="/form-echo", params=(body("n"),))
    got = await echoed(adapter, binding, {"n": 1})
    assert got["content_type"] == "application/json" and got["raw"] == '{"n":1}'


async def test_a_multipart_body_is_built_again_when_a_keyed_request_is_resent() -> None:
    """aiohttp consumes a multipart payload as it sends it: the resend must carry the whole body again."""

    async def drop_the_first(exchange: Exchange, writer: asyncio.StreamWriter) -> bool:
        if len(server.exchanges) == 1:
            return False
        writer.write(OK)
        await writer.drain()
        return True

    server = RawServer(drop_the_first)
    async with server, HttpAdapter() as adapter:
        binding = form(server.url, MULTIPART, body("purpose"), body("file", file="image/png"))
        arguments = {"purpose": "p", "file": base64.b64encode(PNG).decode()}
        outcome = await adapter.execute(
            binding, arguments, headers={"Idempotency-Key": "k-1"}, deduplicated=True
        )
    assert outcome.kind is OutcomeKind.SUCCESS, outcome
    assert len(server.exchanges) == 2
    for exchange in server.exchanges:
        assert PNG in exchange.body and b'name="purpose"' in exchange.body
        assert b"content-type: multipart/form-data; boundary=" in exchange.head.lower()
