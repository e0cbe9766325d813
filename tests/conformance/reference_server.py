"""The conformance suite's fixture server, written for Colonnade's transparency test.

No registry ships a server with the fixtures `@modelcontextprotocol/conformance` calls (tools such
as `test_simple_text`, prompts, `test://` resources), so this one is written from the suite's
fixture list (shared/CONFORMANCE.md) on the SDK's low-level `Server`. It serves both protocol eras:
handshake-era clients get server-to-client requests (sampling, elicitation) on the call's stream;
2026-07-28 clients get `InputRequiredResult` rounds. The 2025-only fixtures answer with input
rounds on the modern era too, so a gateway that talks 2026-07-28 to this server can serve them to
handshake-era clients.

Run: `python tests/conformance/reference_server.py --port 38102` (Streamable HTTP at /mcp, loopback).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import struct
import uuid
import zlib
from collections import OrderedDict
from typing import Any

import mcp_types as types
import uvicorn
from mcp.server.caching import CACHEABLE_METHODS, CacheHint
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.server.streamable_http import EventCallback, EventMessage, EventStore
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    PromptsListChanged,
    ToolsListChanged,
)
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

__all__ = ["build_server", "main"]

Ctx = ServerRequestContext[Any, Any]
NAME = "colonnade-conformance-reference"


def _png() -> str:
    """A 1x1 red PNG, base64."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = b"\x00\xff\x00\x00"
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
    return base64.b64encode(png).decode("ascii")


def _wav() -> str:
    """A short silent 8 kHz mono WAV, base64."""
    samples = b"\x00\x00" * 80
    header = b"RIFF" + struct.pack("<I", 36 + len(samples)) + b"WAVEfmt "
    header += (
        struct.pack("<IHHIIHH", 16, 1, 1, 8000, 16000, 2, 16) + b"data" + struct.pack("<I", len(samples))
    )
    return base64.b64encode(header + samples).decode("ascii")


PNG = _png()
WAV = _wav()
EMPTY: dict[str, Any] = {"type": "object", "properties": {}}

JSON_SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}

SEP1034_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "score": {"type": "number", "default": 95.5},
        "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
        "verified": {"type": "boolean", "default": True},
    },
}

SEP1330_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {
            "type": "string",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ],
        },
        "legacyEnum": {
            "type": "string",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {
            "type": "array",
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
        },
        "titledMulti": {
            "type": "array",
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]
            },
        },
    },
}

USER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"username": {"type": "string"}, "email": {"type": "string"}},
    "required": ["username", "email"],
}


def _tool(name: str, description: str, schema: dict[str, Any] | None = None) -> types.Tool:
    return types.Tool(name=name, description=description, input_schema=schema or EMPTY)


def _text(text: str) -> types.TextContent:
    return types.TextContent(type="text", text=text)


def _done(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[_text(text)])


def _elicit(message: str, schema: dict[str, Any]) -> types.ElicitRequest:
    return types.ElicitRequest(params=types.ElicitRequestFormParams(message=message, requested_schema=schema))


def _sample(text: str, max_tokens: int) -> types.CreateMessageRequest:
    message = types.SamplingMessage(role="user", content=_text(text))
    return types.CreateMessageRequest(
        params=types.CreateMessageRequestParams(messages=[message], max_tokens=max_tokens)
    )


def _modern(ctx: Ctx) -> bool:
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


def _responses(params: types.CallToolRequestParams | types.GetPromptRequestParams) -> dict[str, Any]:
    return dict(params.input_responses or {})


def _accepted(response: Any, field: str) -> Any:
    """The value of `field` in an accepted elicitation response, else None."""
    if isinstance(response, types.ElicitResult) and response.action == "accept" and response.content:
        return response.content.get(field)
    return None


def _sampled_text(response: Any) -> str | None:
    if isinstance(response, types.CreateMessageResult) and isinstance(response.content, types.TextContent):
        return response.content.text
    return None


class _MemoryEventStore(EventStore):
    """Events kept in memory, so a client can resume a closed stream with Last-Event-ID."""

    def __init__(self, limit: int = 10_000) -> None:
        self._events: OrderedDict[str, tuple[str, types.JSONRPCMessage | None]] = OrderedDict()
        self._limit = limit

    async def store_event(self, stream_id: str, message: types.JSONRPCMessage | None) -> str:
        event_id = uuid.uuid4().hex
        self._events[event_id] = (stream_id, message)
        while len(self._events) > self._limit:
            self._events.popitem(last=False)
        return event_id

    async def replay_events_after(self, last_event_id: str, send_callback: EventCallback) -> str | None:
        if last_event_id not in self._events:
            return None
        stream_id = self._events[last_event_id][0]
        found = False
        for event_id, (stream, message) in list(self._events.items()):
            if found and stream == stream_id and message is not None:
                await send_callback(EventMessage(message, event_id))
            found = found or event_id == last_event_id
        return stream_id


class Reference:
    """The fixtures: tools, prompts, resources and completion, with list changes on demand."""

    def __init__(self) -> None:
        self.bus = InMemorySubscriptionBus()
        self.extra_tools = 0
        self.extra_prompts = 0
        self.server: Server[Any] = _ReferenceServer(
            NAME,
            version="1.0.0",
            cache_hints={method: CacheHint(ttl_ms=0, scope="private") for method in CACHEABLE_METHODS},
            on_list_tools=self.list_tools,
            on_call_tool=self.call_tool,
            on_list_prompts=self.list_prompts,
            on_get_prompt=self.get_prompt,
            on_list_resources=self.list_resources,
            on_list_resource_templates=self.list_templates,
            on_read_resource=self.read_resource,
            on_subscribe_resource=self.subscribe,
            on_unsubscribe_resource=self.subscribe,
            on_set_logging_level=self.set_level,
            on_completion=self.complete,
            on_subscriptions_listen=ListenHandler(self.bus),
        )
        self.server.middleware.append(
            RequestStateBoundary(RequestStateSecurity.ephemeral(), default_audience=NAME)
        )

    # -- tools ---------------------------------------------------------------------------------

    def tools(self) -> list[types.Tool]:
        tools = [
            _tool("test_simple_text", "Returns a simple text response"),
            _tool("test_image_content", "Returns an image"),
            _tool("test_audio_content", "Returns audio"),
            _tool("test_embedded_resource", "Returns an embedded resource"),
            _tool("test_multiple_content_types", "Returns text, an image and a resource"),
            _tool("test_tool_with_logging", "Sends three log messages, then answers"),
            _tool("test_tool_with_progress", "Reports progress 0, 50, 100, then answers"),
            _tool("test_error_handling", "Always fails"),
            _tool(
                "test_sampling",
                "Asks the client's LLM",
                {"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]},
            ),
            _tool(
                "test_elicitation",
                "Asks the user for a username and an email",
                {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
            ),
            _tool("test_elicitation_sep1034_defaults", "Elicitation with default values"),
            _tool("test_elicitation_sep1330_enums", "Elicitation with enum shapes"),
            _tool("json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features", JSON_SCHEMA_2020_12),
            _tool("test_reconnection", "Closes the SSE stream before answering"),
            _tool(
                "test_custom_headers",
                "Mirrors an argument into the Mcp-Param-Region header",
                {
                    "type": "object",
                    "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
                    "required": ["region"],
                },
            ),
            _tool("test_missing_capability", "Needs the client's sampling capability"),
            _tool("test_streaming_elicitation", "Asks for input with an incomplete result"),
            _tool("test_logging_tool", "Logs only when the request opts in"),
            _tool("test_trigger_tool_change", "Changes the tool list"),
            _tool("test_trigger_prompt_change", "Changes the prompt list"),
            _tool("test_input_required_result_elicitation", "Asks for the user's name"),
            _tool("test_input_required_result_sampling", "Asks the client's LLM"),
            _tool("test_input_required_result_list_roots", "Asks for the client's roots"),
            _tool("test_input_required_result_request_state", "Round trip with request state"),
            _tool("test_input_required_result_multiple_inputs", "Three input requests at once"),
            _tool("test_input_required_result_multi_round", "Two rounds of input"),
            _tool("test_input_required_result_tampered_state", "Integrity-protected request state"),
            _tool("test_input_required_result_capabilities", "Asks only for what the client declared"),
        ]
        tools += [
            _tool(f"test_dynamic_tool_{n}", f"Added by test_trigger_tool_change ({n})")
            for n in range(self.extra_tools)
        ]
        return tools

    async def list_tools(
        self, ctx: Ctx, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=self.tools())

    async def call_tool(
        self, ctx: Ctx, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        name = params.name
        simple = _SIMPLE.get(name)
        if simple is not None:
            return simple()
        handler = getattr(self, f"_{name}", None)
        if handler is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {name}")
        result: types.CallToolResult | types.InputRequiredResult = await handler(ctx, params)
        return result

    async def _test_tool_with_logging(
        self, ctx: Ctx, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        for index, text in enumerate(
            ("Tool execution started", "Tool processing data", "Tool execution completed")
        ):
            if index:
                await asyncio.sleep(0.05)
            await ctx.session.send_log_message("info", text, related_request_id=ctx.request_id)
        return _done("Tool with logging executed successfully")

    async def _test_logging_tool(self, ctx: Ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        for text in ("Logging tool started", "Logging tool finished"):
            await ctx.session.send_log_message("info", text, related_request_id=ctx.request_id)
        return _done("Logging tool executed successfully")

    async def _test_tool_with_progress(
        self, ctx: Ctx, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        for index, progress in enumerate((0, 50, 100)):
            if index:
                await asyncio.sleep(0.05)
            await ctx.session.report_progress(progress, 100)
        return _done("Tool with progress executed successfully")

    async def _test_reconnection(self, ctx: Ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        if ctx.close_sse_stream is not None:
            await asyncio.sleep(0.05)  # the priming event goes out first
            await ctx.close_sse_stream()
            await asyncio.sleep(0.1)
        return _done("Reconnection test completed successfully")

    async def _test_custom_headers(
        self, ctx: Ctx, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        return _done(f"Region: {(params.arguments or {}).get('region')}")

    async def _test_missing_capability(
        self, ctx: Ctx, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        caps = ctx.session.client_capabilities
        if caps is None or caps.sampling is None:
            raise MCPError(
                types.MISSING_REQUIRED_CLIENT_CAPABILITY,
                "This tool needs the client's sampling capability",
                data={"requiredCapabilities": {"sampling": {}}},
            )
        return _done("The client declared sampling")

    async def _test_trigger_tool_change(
        self, ctx: Ctx, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        self.extra_tools += 1
        await self.bus.publish(ToolsListChanged())
        if not _modern(ctx):
            await ctx.session.send_tool_list_changed()
        return _done("The tool list changed")

    async def _test_trigger_prompt_change(
        self, ctx: Ctx, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        self.extra_prompts += 1
        await self.bus.publish(PromptsListChanged())
        if not _modern(ctx):
            await ctx.session.send_prompt_list_changed()
        return _done("The prompt list changed")

    # Fixtures that ask the client: a server-to-client request on the handshake era, input rounds on 2026.

    async def _test_sampling(
        self, ctx: Ctx, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        prompt = str((params.arguments or {}).get("prompt", ""))
        caps = ctx.session.client_capabilities
        if caps is None or caps.sampling is None:
            return types.CallToolResult(
                content=[_text("Error: the client does not support sampling")], is_error=True
            )
        request = _sample(prompt, 100)
        if _modern(ctx):
            text = _sampled_text(_responses(params).get("sampling"))
            if text is None:
                return types.InputRequiredResult(input_requests={"sampling": request})
        else:
            result = await ctx.session.send_request(
                request, types.CreateMessageResult, metadata=_related(ctx)
            )
            text = _sampled_text(result) or ""
        return _done(f"LLM response: {text}")

    async def _ask(
        self, ctx: Ctx, params: types.CallToolRequestParams, message: str, schema: dict[str, Any]
    ) -> types.ElicitResult | types.InputRequiredResult:
        request = _elicit(message, schema)
        if _modern(ctx):
            response = _responses(params).get("elicitation")
            if not isinstance(response, types.ElicitResult):
                return types.InputRequiredResult(input_requests={"elicitation": request})
            return response
        return await ctx.session.send_request(request, types.ElicitResult, metadata=_related(ctx))

    async def _test_elicitation(
        self, ctx: Ctx, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        message = str((params.arguments or {}).get("message", "Please provide your information"))
        answer = await self._ask(ctx, params, message, USER_SCHEMA)
        if isinstance(answer, types.InputRequiredResult):
            return answer
        return _done(f"User response: action={answer.action}, content={json.dumps(answer.content)}")

    async def _test_elicitation_sep1034_defaults(
        self, ctx: Ctx, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        answer = await self._ask(
            ctx, params, "Please review and update the form fields with defaults", SEP1034_SCHEMA
        )
        if isinstance(answer, types.InputRequiredResult):
            return answer
        return _done(f"Elicitation completed: action={answer.action}, content={json.dumps(answer.content)}")

    async def _test_elicitation_sep1330_enums(
        self, ctx: Ctx, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        answer = await self._ask(ctx, params, "Please select options from the enum fields", SEP1330_SCHEMA)
        if isinstance(answer, types.InputRequiredResult):
            return answer
        return _done(f"Elicitation completed: action={answer.action}, content={json.dumps(answer.content)}")

    async def _test_streaming_elicitation(
        self, ctx: Ctx, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        name = _accepted(_responses(params).get("user_name"), "name")
        if name is None:
            return types.InputRequiredResult(
                input_requests={"user_name": _elicit("What is your name?", _NAME_SCHEMA)}
            )
        return _done(f"Hello, {name}!")

    # 2026-07-28 multi-round-trip fixtures (SEP-2322).

    async def _test_input_required_result_elicitation(
        self, ctx: Ctx, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        return await self._test_streaming_elicitation(ctx, params)

    async def _test_input_required_result_sampling(
        self, ctx: Ctx, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        text = _sampled_text(_responses(params).get("capital_question"))
        if text is None:
            return types.InputRequiredResult(
                input_requests={"capital_question": _sample("What is the capital of France?", 100)}
            )
        return _done(f"The client's LLM answered: {text}")

    async def _test_input_required_result_list_roots(
        self, ctx: Ctx, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        roots = _responses(params).get("client_roots")
        if not isinstance(roots, types.ListRootsResult):
            return types.InputRequiredResult(input_requests={"client_roots": types.ListRootsRequest()})
        return _done("Client roots: " + ", ".join(str(root.uri) for root in roots.roots))

    async def _test_input_required_result_request_state(
        self, ctx: Ctx, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        confirmed = _responses(params).get("confirm")
        if params.request_state != "state-ok" or not isinstance(confirmed, types.ElicitResult):
            return types.InputRequiredResult(
                input_requests={"confirm": _elicit("Please confirm", _OK_SCHEMA)}, request_state="state-ok"
            )
        return _done(f"Request state state-ok echoed; confirmation: {confirmed.action}")

    async def _test_input_required_result_multiple_inputs(
        self, ctx: Ctx, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        answers = _responses(params)
        name = _accepted(answers.get("user_name"), "name")
        greeting = _sampled_text(answers.get("greeting"))
        roots = answers.get("client_roots")
        if name is None or greeting is None or not isinstance(roots, types.ListRootsResult):
            return types.InputRequiredResult(
                input_requests={
                    "user_name": _elicit("What is your name?", _NAME_SCHEMA),
                    "greeting": _sample("Generate a greeting", 50),
                    "client_roots": types.ListRootsRequest(),
                },
                request_state="multiple-inputs",
            )
        return _done(f"{greeting} {name}; roots: {len(roots.roots)}")

    async def _test_input_required_result_multi_round(
        self, ctx: Ctx, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        answers = _responses(params)
        if params.request_state == "round-2":
            color = _accepted(answers.get("step2"), "color")
            if color is not None:
                return _done(f"Favourite colour: {color}")
            return _step2()
        name = _accepted(answers.get("step1"), "name")
        if params.request_state == "round-1" and name is not None:
            return _step2()
        return types.InputRequiredResult(
            input_requests={"step1": _elicit("Step 1: What is your name?", _NAME_SCHEMA)},
            request_state="round-1",
        )

    async def _test_input_required_result_tampered_state(
        self, ctx: Ctx, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        if params.request_state is None:
            return types.InputRequiredResult(
                input_requests={"confirm": _elicit("Please confirm", _OK_SCHEMA)}, request_state="untampered"
            )
        return _done(f"State verified: {params.request_state}")

    async def _test_input_required_result_capabilities(
        self, ctx: Ctx, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        caps = ctx.session.client_capabilities or types.ClientCapabilities()
        answers = _responses(params)
        wanted: dict[str, types.InputRequest] = {}
        if caps.sampling is not None and _sampled_text(answers.get("sampling")) is None:
            wanted["sampling"] = _sample("Say hello", 50)
        if caps.elicitation is not None and answers.get("elicitation") is None:
            wanted["elicitation"] = _elicit("What is your name?", _NAME_SCHEMA)
        if wanted:
            return types.InputRequiredResult(input_requests=wanted)
        return _done("Asked only for what the client declared")

    # -- prompts -------------------------------------------------------------------------------

    async def list_prompts(
        self, ctx: Ctx, params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        prompts = [
            types.Prompt(name="test_simple_prompt", description="A simple prompt without arguments"),
            types.Prompt(
                name="test_prompt_with_arguments",
                description="A prompt with two arguments",
                arguments=[
                    types.PromptArgument(name="arg1", description="First argument", required=True),
                    types.PromptArgument(name="arg2", description="Second argument", required=True),
                ],
            ),
            types.Prompt(
                name="test_prompt_with_embedded_resource",
                description="A prompt with an embedded resource",
                arguments=[
                    types.PromptArgument(name="resourceUri", description="URI to embed", required=True)
                ],
            ),
            types.Prompt(name="test_prompt_with_image", description="A prompt with an image"),
            types.Prompt(
                name="test_input_required_result_prompt", description="A prompt that asks for context"
            ),
        ]
        prompts += [
            types.Prompt(name=f"test_dynamic_prompt_{n}", description="Added by test_trigger_prompt_change")
            for n in range(self.extra_prompts)
        ]
        return types.ListPromptsResult(prompts=prompts)

    async def get_prompt(
        self, ctx: Ctx, params: types.GetPromptRequestParams
    ) -> types.GetPromptResult | types.InputRequiredResult:
        args = params.arguments or {}
        if params.name == "test_simple_prompt":
            return _prompt(_text("This is a simple prompt for testing."))
        if params.name == "test_prompt_with_arguments":
            return _prompt(
                _text(f"Prompt with arguments: arg1='{args.get('arg1')}', arg2='{args.get('arg2')}'")
            )
        if params.name == "test_prompt_with_embedded_resource":
            resource = types.TextResourceContents(
                uri=args.get("resourceUri", "test://example-resource"),
                mime_type="text/plain",
                text="Embedded resource content for testing.",
            )
            return _prompt(
                types.EmbeddedResource(type="resource", resource=resource),
                _text("Please process the embedded resource above."),
            )
        if params.name == "test_prompt_with_image":
            image = types.ImageContent(type="image", data=PNG, mime_type="image/png")
            return _prompt(image, _text("Please analyze the image above."))
        if params.name == "test_input_required_result_prompt":
            context = _accepted(_responses(params).get("user_context"), "context")
            if context is None:
                schema = {
                    "type": "object",
                    "properties": {"context": {"type": "string"}},
                    "required": ["context"],
                }
                return types.InputRequiredResult(
                    input_requests={"user_context": _elicit("What context should the prompt use?", schema)}
                )
            return _prompt(_text(f"Use this context: {context}"))
        raise MCPError(types.INVALID_PARAMS, f"Unknown prompt: {params.name}")

    # -- resources -----------------------------------------------------------------------------

    async def list_resources(
        self, ctx: Ctx, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri="test://static-text",
                    name="static-text",
                    description="A static text resource",
                    mime_type="text/plain",
                ),
                types.Resource(
                    uri="test://static-binary",
                    name="static-binary",
                    description="A static binary resource (a PNG image)",
                    mime_type="image/png",
                ),
                types.Resource(
                    uri="test://watched-resource",
                    name="watched-resource",
                    description="A resource for the subscription tests",
                    mime_type="text/plain",
                ),
            ]
        )

    async def list_templates(
        self, ctx: Ctx, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        template = types.ResourceTemplate(
            uri_template="test://template/{id}/data",
            name="template",
            description="Data for an id",
            mime_type="application/json",
        )
        return types.ListResourceTemplatesResult(resource_templates=[template])

    async def read_resource(
        self, ctx: Ctx, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult | types.InputRequiredResult:
        uri = str(params.uri)
        if uri == "test://static-text":
            text = "This is the content of the static text resource."
            return _contents(types.TextResourceContents(uri=uri, mime_type="text/plain", text=text))
        if uri == "test://static-binary":
            return _contents(types.BlobResourceContents(uri=uri, mime_type="image/png", blob=PNG))
        if uri == "test://watched-resource":
            text = "This resource is watched for changes."
            return _contents(types.TextResourceContents(uri=uri, mime_type="text/plain", text=text))
        prefix, suffix = "test://template/", "/data"
        if uri.startswith(prefix) and uri.endswith(suffix) and len(uri) > len(prefix + suffix):
            item = uri[len(prefix) : -len(suffix)]
            data = {"id": item, "templateTest": True, "data": f"Data for ID: {item}"}
            return _contents(
                types.TextResourceContents(uri=uri, mime_type="application/json", text=json.dumps(data))
            )
        raise MCPError(types.INVALID_PARAMS, f"Resource not found: {uri}", data={"uri": uri})

    async def subscribe(
        self, ctx: Ctx, params: types.SubscribeRequestParams | types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        return types.EmptyResult()

    async def set_level(self, ctx: Ctx, params: types.SetLevelRequestParams) -> types.EmptyResult:
        return types.EmptyResult()

    async def complete(self, ctx: Ctx, params: types.CompleteRequestParams) -> types.CompleteResult:
        values: list[str] = []
        if isinstance(params.ref, types.PromptReference) and params.ref.name == "test_prompt_with_arguments":
            values = [v for v in ("paris", "park", "party") if v.startswith(params.argument.value)]
        return types.CompleteResult(
            completion=types.Completion(values=values, total=len(values), has_more=False)
        )


_NAME_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string"}},
    "required": ["name"],
}
_OK_SCHEMA: dict[str, Any] = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


def _step2() -> types.InputRequiredResult:
    schema = {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]}
    return types.InputRequiredResult(
        input_requests={"step2": _elicit("Step 2: What is your favorite color?", schema)},
        request_state="round-2",
    )


def _related(ctx: Ctx) -> Any:
    from mcp.shared.message import ServerMessageMetadata

    return ServerMessageMetadata(related_request_id=ctx.request_id)


def _prompt(*contents: types.ContentBlock) -> types.GetPromptResult:
    return types.GetPromptResult(messages=[types.PromptMessage(role="user", content=c) for c in contents])


def _contents(item: types.TextResourceContents | types.BlobResourceContents) -> types.ReadResourceResult:
    return types.ReadResourceResult(contents=[item])


_SIMPLE = {
    "test_simple_text": lambda: _done("This is a simple text response for testing."),
    "test_image_content": lambda: types.CallToolResult(
        content=[types.ImageContent(type="image", data=PNG, mime_type="image/png")]
    ),
    "test_audio_content": lambda: types.CallToolResult(
        content=[types.AudioContent(type="audio", data=WAV, mime_type="audio/wav")]
    ),
    "test_embedded_resource": lambda: types.CallToolResult(
        content=[
            types.EmbeddedResource(
                type="resource",
                resource=types.TextResourceContents(
                    uri="test://embedded-resource",
                    mime_type="text/plain",
                    text="This is an embedded resource content.",
                ),
            )
        ]
    ),
    "test_multiple_content_types": lambda: types.CallToolResult(
        content=[
            _text("Multiple content types test:"),
            types.ImageContent(type="image", data=PNG, mime_type="image/png"),
            types.EmbeddedResource(
                type="resource",
                resource=types.TextResourceContents(
                    uri="test://mixed-content-resource",
                    mime_type="application/json",
                    text=json.dumps({"test": "data", "value": 123}),
                ),
            ),
        ]
    ),
    "test_error_handling": lambda: types.CallToolResult(
        content=[_text("This tool intentionally returns an error for testing")], is_error=True
    ),
}


class _ReferenceServer(Server[Any]):
    """Announces list changes to handshake-era clients on every transport (HTTP included)."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        options = NotificationOptions(prompts_changed=True, resources_changed=True, tools_changed=True)
        return super().create_initialization_options(
            notification_options or options, experimental_capabilities, extensions
        )


def build_server() -> Reference:
    return Reference()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=38102)
    args = parser.parse_args()
    server = build_server().server
    app = server.streamable_http_app(host="127.0.0.1", event_store=_MemoryEventStore(), retry_interval=500)
    # h11 trims optional whitespace around header values as RFC 9110 says (httptools keeps it).
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", http="h11")


if __name__ == "__main__":
    main()
