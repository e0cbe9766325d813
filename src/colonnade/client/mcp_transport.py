"""The client over MCP, around an open official `mcp` client (either protocol era).

A call is `tools/call` with the envelope's other fields in `_meta["colonnade/request"]` (call id,
version pin, context, constraints: deadline and idempotency key) and an approval token in
`_meta["colonnade/approval_token"]`; the answer's `_meta["colonnade/result"]` is the CallResult
(its output taken from the MCP result itself, where it travels). Commit and discard are the
gateway's own tools. Approvals and tool definitions are REST routes: give `rest` (a
`RestTransport` to the same gateway) to use them over MCP too.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from mcp import Client
from mcp_types import CallToolResult, TextContent
from pydantic import ValidationError

from colonnade.calls.envelope import (
    APPROVAL_TOKEN_META_KEY,
    REQUEST_META_KEY,
    RESULT_META_KEY,
    CallRequest,
    CallResult,
)
from colonnade.client.client_errors import ClientError
from colonnade.client.rest_transport import RestTransport

__all__ = ["COMMIT_TOOL", "DISCARD_TOOL", "McpTransport"]

COMMIT_TOOL = "colonnade__commit_call"
DISCARD_TOOL = "colonnade__discard_call"
_ENVELOPE_FIELDS = ("call_id", "tool_version", "fn", "context", "constraints", "provenance")


class McpTransport:
    """`McpTransport(client)` with an entered `mcp.Client`; `rest=` for approvals and tool schemas."""

    def __init__(self, client: Client, *, rest: RestTransport | None = None) -> None:
        self._client = client
        self._rest = rest

    async def call(self, request: CallRequest) -> CallResult:
        dumped = request.model_dump(mode="json", exclude_none=True)
        envelope = {name: dumped[name] for name in _ENVELOPE_FIELDS if name in dumped}
        meta: dict[str, Any] = {REQUEST_META_KEY: envelope}
        if request.approval_token:
            meta[APPROVAL_TOKEN_META_KEY] = request.approval_token
        if request.dry_run:
            meta["colonnade/dry_run"] = True
        return await self._tool(request.tool_id, dict(request.input), meta)

    async def commit(self, commit_token: str, call_id: str | None = None) -> CallResult:
        return await self._tool(COMMIT_TOOL, {"commit_token": commit_token}, _call_id_meta(call_id))

    async def discard(self, commit_token: str, call_id: str | None = None) -> CallResult:
        return await self._tool(DISCARD_TOOL, {"commit_token": commit_token}, _call_id_meta(call_id))

    async def approval(self, approval_id: str) -> dict[str, Any]:
        return await self._needs_rest("reading an approval").approval(approval_id)

    async def resume(self, approval_id: str, call_id: str | None = None) -> CallResult:
        return await self._needs_rest("resuming an approved call").resume(approval_id, call_id)

    async def tool(self, name: str) -> dict[str, Any]:
        return await self._needs_rest("reading a tool's schemas").tool(name)

    async def aclose(self) -> None:
        if self._rest is not None:
            await self._rest.aclose()

    async def _tool(self, name: str, arguments: dict[str, Any], meta: dict[str, Any]) -> CallResult:
        result = await self._client.call_tool(name, arguments, meta=meta)  # type: ignore[arg-type]
        envelope = (result.meta or {}).get(RESULT_META_KEY)
        if envelope is None:
            text = " ".join(getattr(block, "text", "") for block in result.content)[:200]
            raise ClientError(f"tools/call {name} answered without a {RESULT_META_KEY} envelope: {text}")
        try:
            parsed = CallResult.model_validate(envelope)
        except ValidationError as exc:
            raise ClientError(
                f"tools/call {name}: the envelope is not a CallResult: {exc.errors()[:3]}"
            ) from exc
        if parsed.ok and not result.is_error:
            parsed = parsed.model_copy(update={"output": _output_of(result)})
        return parsed

    def _needs_rest(self, doing: str) -> RestTransport:
        if self._rest is None:
            raise ClientError(f"{doing} is a REST route: build McpTransport(client, rest=RestTransport(...))")
        return self._rest


def _output_of(result: CallToolResult) -> Any:
    """A success's output: the envelope leaves it out, because the MCP result carries it. The text
    of a gateway-rendered success is the output as JSON; a federated server's own answer is kept
    as its structured content, or its content blocks."""
    texts = [block.text for block in result.content if isinstance(block, TextContent)]
    if len(texts) == 1 and len(result.content) == 1:
        with contextlib.suppress(ValueError):
            return json.loads(texts[0])
    if result.structured_content is not None:
        return result.structured_content
    return {
        "content": [
            block.model_dump(mode="json", by_alias=True, exclude_none=True) for block in result.content
        ]
    }


def _call_id_meta(call_id: str | None) -> dict[str, Any]:
    return {REQUEST_META_KEY: {"call_id": call_id}} if call_id else {}
