"""Form and multipart bodies from an imported OpenAPI document to the backend's parser, through the pipeline.

An OpenAPI document declares a Twilio-like urlencoded write and a Stripe-like multipart upload;
the import keeps both (it used to skip them), the gateway serves them, and the fault backend's
`/echo` route answers with what it parsed, over REST's CallService and MCP in both eras.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client

from colonnade.calls.envelope import CallRequest, CallStatus
from colonnade.catalog.catalog import Catalog
from colonnade.config import Settings
from colonnade.contracts.model import Contract
from colonnade.contracts.openapi import import_openapi
from colonnade.runtime.gateway import Gateway

PDF = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"


def _document(base_url: str) -> dict[str, Any]:
    def operation(operation_id: str, media: str, schema: dict[str, Any], **extra: Any) -> dict[str, Any]:
        return {
            "operationId": operation_id,
            "summary": f"Echo {operation_id}.",
            "requestBody": {"required": True, "content": {media: {"schema": schema, **extra}}},
            "responses": {"200": {"description": "What the backend parsed."}},
        }

    message = {
        "type": "object",
        "properties": {
            "To": {"type": "string"},
            "StatusCallbackEvent": {"type": "array", "items": {"type": "string"}},
            "metadata": {"type": "object", "additionalProperties": {"type": "string"}},
            "Shorten": {"type": "boolean"},
        },
        "required": ["To"],
    }
    upload = {
        "type": "object",
        "properties": {"purpose": {"type": "string"}, "file": {"type": "string", "format": "binary"}},
        "required": ["purpose", "file"],
    }
    return {
        "openapi": "3.0.3",
        "info": {"title": "Echo", "version": "1.0.0"},
        "servers": [{"url": base_url}],
        "paths": {
            "/echo": {
                "post": operation(
                    "send_message",
                    "application/x-www-form-urlencoded",
                    message,
                    encoding={"metadata": {"style": "deepObject", "explode": True}},
                ),
                "put": operation(
                    "upload_file",
                    "multipart/form-data",
                    upload,
                    encoding={"file": {"contentType": "application/pdf"}},
                ),
            }
        },
    }


@pytest.fixture
async def gateway(fault_url: str) -> AsyncIterator[Gateway]:
    result = import_openapi(_document(fault_url), tenant="lab", api="echo")
    assert result.skipped == []
    catalog = Catalog()
    catalog.publish(Contract.model_validate(result.contract_data))
    built = Gateway(Settings(), catalog=catalog)
    yield built
    await built.aclose()


async def test_a_form_write_reaches_the_backend_as_fields(gateway: Gateway) -> None:
    arguments = {
        "To": "+1 555 0100",
        "StatusCallbackEvent": ["initiated", "ringing"],
        "metadata": {"order": "A-1"},
        "Shorten": True,
    }
    result = await gateway.calls.call(CallRequest(tool_id="lab:echo:send_message", input=arguments))
    assert result.status is CallStatus.SUCCESS, result.error
    assert result.output["media_type"] == "application/x-www-form-urlencoded"
    assert result.output["fields"] == [
        ["To", "+1 555 0100"],
        ["StatusCallbackEvent", "initiated"],
        ["StatusCallbackEvent", "ringing"],
        ["metadata[order]", "A-1"],
        ["Shorten", "true"],
    ]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_multipart_upload_over_mcp_reaches_the_backend_as_a_file(gateway: Gateway, mode: str) -> None:
    arguments = {"purpose": "dispute_evidence", "file": base64.b64encode(PDF).decode()}
    async with Client(gateway.mcp.server, mode=mode) as client:  # type: ignore[arg-type]
        result = await client.call_tool("lab__echo__upload_file", arguments)
    assert result.is_error is False, result.content
    echoed = result.structured_content
    assert isinstance(echoed, dict) and echoed["media_type"] == "multipart/form-data"
    assert echoed["fields"] == [["purpose", "dispute_evidence"]]
    assert echoed["files"] == [
        {"name": "file", "filename": "file", "content_type": "application/pdf", "base64": arguments["file"]}
    ]


async def test_a_file_that_is_not_base64_is_refused_before_it_is_sent(gateway: Gateway) -> None:
    request = CallRequest(tool_id="lab:echo:upload_file", input={"purpose": "x", "file": "%%%"})
    result = await gateway.calls.call(request)
    assert result.status is CallStatus.INVALID_REQUEST
    assert result.error is not None and result.error.code == "I-REQ-SCHEMA"
    assert "base64" in result.error.message
