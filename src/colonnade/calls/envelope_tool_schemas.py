"""Per-tool request and response JSON Schemas: the envelope schemas narrowed to one tool.

A client that calls a handful of tools wants to validate exactly what it sends and receives for
each, without running Colonnade: the request schema is `call-request.schema.json` whose `tool_id`
names this tool and whose `input` is the tool's input schema; the response schema is the result
schema of the chosen envelope version whose `output` (when there is one) is the tool's output
schema. The tool's own schemas are embedded as schema resources with an `$id` of their own, so
their internal `$ref`s resolve inside them and never collide with the envelope's `$defs`.
`colonnade tools schemas --out DIR` writes them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from colonnade.calls.envelope import EnvelopeVersion
from colonnade.calls.envelope_schemas import CALL_REQUEST, CALL_RESULT, CALL_RESULT_V1
from colonnade.catalog.tool import Tool

__all__ = ["ToolSchemaFiles", "tool_request_schema", "tool_response_schema", "write_tool_schemas"]

_ID_BASE = "https://colonnade.dev/schemas/tools/"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


@dataclass(frozen=True, slots=True)
class ToolSchemaFiles:
    """What was written for one tool."""

    canonical_name: str
    request: Path
    response: Path


def file_stem(tool: Tool) -> str:
    """The tool's wire name as a file name (a wire name from another source may hold any character)."""
    return _UNSAFE.sub("_", tool.wire_name) or "tool"


def tool_request_schema(tool: Tool) -> dict[str, Any]:
    """`call-request.schema.json` for this tool only: its names in `tool_id`, its input schema in `input`."""
    schema = CALL_REQUEST.schema()
    stem = file_stem(tool)
    schema["$id"] = f"{_ID_BASE}{stem}.request.schema.json"
    schema["title"] = f"CallRequest of {tool.canonical_name} {tool.version}"
    schema["description"] = f"A call of {tool.canonical_name} ({tool.wire_name}): {tool.description}".strip()
    properties = schema["properties"]
    properties["tool_id"] = {"type": "string", "enum": sorted({tool.canonical_name, tool.wire_name})}
    properties["input"] = _embedded(tool.input_schema, f"{_ID_BASE}{stem}.input.schema.json")
    return schema


def tool_response_schema(tool: Tool, version: EnvelopeVersion = 1) -> dict[str, Any]:
    """The result schema of envelope `version` for this tool: `output` is its output schema or null.

    Null because a dry run and every failure carry no output; a tool without an output schema
    keeps an open `output`."""
    schema = (CALL_RESULT_V1 if version == 1 else CALL_RESULT).schema()
    stem = file_stem(tool)
    schema["$id"] = f"{_ID_BASE}{stem}.response.v{version}.schema.json"
    schema["title"] = f"CallResult of {tool.canonical_name} {tool.version} (envelope version {version})"
    schema["description"] = f"The outcome of a call of {tool.canonical_name}. {schema['description']}"
    if tool.output_schema is not None:
        output = _embedded(tool.output_schema, f"{_ID_BASE}{stem}.output.schema.json")
        schema["properties"]["output"] = {"anyOf": [output, {"type": "null"}]}
    return schema


def write_tool_schemas(
    tools: Iterable[Tool],
    directory: Path,
    version: EnvelopeVersion = 1,
    on_written: Callable[[ToolSchemaFiles], None] | None = None,
) -> list[ToolSchemaFiles]:
    """Two files per tool in `directory` (created if needed): `<wire>.request.schema.json` and
    `<wire>.response.schema.json`; raises OSError when the directory cannot be written."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for tool in tools:
        stem = file_stem(tool)
        files = ToolSchemaFiles(
            tool.canonical_name,
            directory / f"{stem}.request.schema.json",
            directory / f"{stem}.response.schema.json",
        )
        _write(files.request, tool_request_schema(tool))
        _write(files.response, tool_response_schema(tool, version))
        written.append(files)
        if on_written is not None:
            on_written(files)
    return written


def _embedded(schema: dict[str, Any], schema_id: str) -> dict[str, Any]:
    """A tool's schema as a resource of its own: its `$ref`s resolve against its own `$id`."""
    return {**schema, "$id": schema_id}


def _write(path: Path, schema: dict[str, Any]) -> None:
    path.write_text(json.dumps(schema, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
