"""What the client needs from a surface of the gateway; REST and MCP each provide it."""

from __future__ import annotations

from typing import Any, Protocol

from colonnade.calls.envelope import CallRequest, CallResult

__all__ = ["Transport"]


class Transport(Protocol):
    async def call(self, request: CallRequest) -> CallResult: ...

    async def commit(self, commit_token: str, call_id: str | None = None) -> CallResult: ...

    async def discard(self, commit_token: str, call_id: str | None = None) -> CallResult: ...

    async def approval(self, approval_id: str) -> dict[str, Any]:
        """The approval record (`GET /v1/approvals/{id}`): `state`, and `token` once approved."""
        ...

    async def resume(self, approval_id: str, call_id: str | None = None) -> CallResult: ...

    async def tool(self, name: str) -> dict[str, Any]:
        """The tool's definition, with its `input_schema` and `output_schema`."""
        ...

    async def aclose(self) -> None: ...
