"""The sidecar: one organ as its own MCP server process (`colonnade organ serve MODULE`, stdio).

Each operation of the organ's card is an MCP tool named as the operation (`store`,
`similarity.search`), with the card's schemas and annotations from its declared side effects.
A call is checked against the input schema and sent as a stimulus; the response is the result
(structured content, and the JSON as text) or a tool error whose text starts with the organ's
failure code. The sidecar does no governance: a gateway in front of it does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

from colonnade.contracts.model import SideEffects
from colonnade.contracts.output_shape import mcp_output_schema, wrap_result
from colonnade.organs.card import FunctionCard, OrganCard
from colonnade.organs.executive import Executive
from colonnade.organs.loading import OrganHost
from colonnade.organs.projection import side_effects_of
from colonnade.organs.protocol import Organ
from colonnade.organs.stimulus import Response, StimulusContext

__all__ = ["META_FAILURE", "SidecarServer", "serve_stdio"]

META_FAILURE = "colonnade/organ_failure"


class SidecarServer:
    """The MCP server of one organ; `server` is the SDK's low-level server."""

    def __init__(self, organ: Organ, *, data_dir: Path | None = None) -> None:
        self.card: OrganCard = organ.describe()
        self.host = OrganHost(organs=[organ], data_dir=data_dir)
        self.executive = Executive.standalone(self.host)
        self._tools = [_tool(op, function) for op, function in self.card.operations().items()]
        self.server: Server[Any] = Server(
            self.card.name,
            version=self.card.version,
            title=f"{self.card.name} organ",
            instructions=self.card.description,
            get_tool_input_schema=self._input_schema,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )

    def _input_schema(self, name: str) -> dict[str, Any] | None:
        function = self.card.operations().get(name)
        return function.input_schema if function is not None else None

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=list(self._tools))

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        response = await self.executive.stimulate_organ(
            self.card.name, params.name, dict(params.arguments or {}), StimulusContext()
        )
        return _rendered(response)


def _rendered(response: Response) -> types.CallToolResult:
    metrics = {"latency_ms": response.latency_ms, "cost": response.cost, "cpu_ms": response.cpu_ms}
    if response.ok:
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(response.output, ensure_ascii=False))],
            structured_content=wrap_result(response.output),
            is_error=False,
            _meta={"colonnade/organ_metrics": metrics},
        )
    failure = response.error
    code = failure.code if failure is not None else "Internal"
    message = failure.message if failure is not None else "the organ answered ok=false without an error"
    meta = {
        META_FAILURE: failure.model_dump(mode="json") if failure is not None else None,
        **{"colonnade/organ_metrics": metrics},
    }
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=f"{code}: {message}")], is_error=True, _meta=meta
    )


def _tool(op: str, function: FunctionCard) -> types.Tool:
    effects = side_effects_of(function)
    return types.Tool(
        name=op,
        description=function.description,
        input_schema=function.input_schema,
        output_schema=mcp_output_schema(function.output_schema),
        annotations=types.ToolAnnotations(
            read_only_hint=effects in (SideEffects.NONE, SideEffects.READ),
            destructive_hint=effects is SideEffects.DESTRUCTIVE,
            idempotent_hint=function.idempotent,
            open_world_hint="network" in function.side_effects,
        ),
        _meta={"colonnade/side_effects": effects.value, "colonnade/tags": list(function.tags)},
    )


async def serve_stdio(organ: Organ, *, data_dir: Path | None = None) -> None:
    """Serve the organ over stdin/stdout until the client closes them."""
    sidecar = SidecarServer(organ, data_dir=data_dir)
    async with stdio_server() as (read, write):
        await sidecar.server.run(read, write, sidecar.server.create_initialization_options())
