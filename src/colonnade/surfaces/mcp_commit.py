"""`colonnade__commit_call`: phase 2 of a two-phase call, for MCP clients (REST has POST /v1/calls/commit).

It is listed while the catalog holds a tool that opts in to two-phase commit; calling it works
whenever a client holds a commit token (from `_meta["colonnade/result"].commit_token`).
"""

from __future__ import annotations

from typing import Any

import mcp_types as types

from colonnade.calls.call_errors import error
from colonnade.calls.envelope import CallResult
from colonnade.calls.service import CallService
from colonnade.catalog.catalog import Catalog

__all__ = ["COMMIT_TOOL", "CommitTool"]

COMMIT_TOOL = "colonnade__commit_call"
_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "commit_token": {
            "type": "string",
            "minLength": 1,
            "description": "The commit_token a two-phase call answered with (status success_prep).",
        }
    },
    "required": ["commit_token"],
    "additionalProperties": False,
}


class CommitTool:
    def __init__(self, catalog: Catalog, calls: CallService) -> None:
        self.catalog = catalog
        self.calls = calls
        self._listed: tuple[int, bool] = (-1, False)

    def listed(self) -> bool:
        """Whether any served tool is two-phase; recomputed only when the catalog changed."""
        version, answer = self._listed
        if version != self.catalog.version:
            answer = any(tool.runtime.two_phase is not None for tool in self.catalog.tools())
            self._listed = (self.catalog.version, answer)
        return answer

    def tool(self) -> types.Tool:
        return types.Tool(
            name=COMMIT_TOOL,
            title="Commit a prepared call",
            description=(
                "Finalize a two-phase call that answered success_prep with a commit_token. Use once, "
                "before the token's deadline; an uncommitted call is rolled back.\nInputs: commit_token*"
            ),
            input_schema=_SCHEMA,
            annotations=types.ToolAnnotations(
                title="Commit a prepared call",
                read_only_hint=False,
                destructive_hint=False,
                idempotent_hint=False,
                open_world_hint=True,
            ),
            _meta={
                "colonnade/canonical_name": "colonnade:gateway:commit_call",
                "colonnade/side_effects": "write",
            },
        )

    def input_schema(self) -> dict[str, Any]:
        return _SCHEMA

    async def call(self, arguments: dict[str, Any]) -> CallResult:
        token = arguments.get("commit_token")
        if not isinstance(token, str) or not token:
            status, err = error(
                "I-REQ-SCHEMA",
                "commit_token is required: the token from the success_prep result",
                violations=[{"pointer": "/commit_token", "message": "a non-empty string is required"}],
            )
            return CallResult(call_id="commit", status=status, error=err)
        return await self.calls.commit(token)
