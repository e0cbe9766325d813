"""Typed trace events: what happened at each step an operator follows, as records with a schema.

The per-call log line says how one call ended; these events follow a conversation through its
steps (a tool list asked for and decided, a call started and ended, a downstream server connected
or lost, the router falling back), each with the ids that join them: `trace_id` (the call's W3C
trace), `session_id` (the MCP session, when the surface knows it) and `request_id` (the call id
or the JSON-RPC request). Events are small slotted records, cheap to build on the hot path (not
frozen: a frozen dataclass's `__init__` costs twice as much; nothing changes an event once made); their
JSON Schemas are exported to `schemas/trace-events.schema.json` (`make schemas`) from the same
classes, so consumers of the JSONL file or OTLP logs can validate them. No argument values and no
secrets: tool names, ids, statuses, codes and durations only.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter

__all__ = [
    "EVENT_KINDS",
    "SCHEMA_FILE",
    "CallEnded",
    "CallStarted",
    "DownstreamConnected",
    "DownstreamDisconnected",
    "RouterFallback",
    "ToolsListed",
    "TraceEvent",
    "main",
    "trace_event_schema",
    "write_schema",
]


@dataclass(slots=True, kw_only=True)
class _Base:
    """Every event's fields: when (ns since the epoch, as OTLP), and the ids joining it to its trace,
    session and request."""

    time_unix_nano: int = field(default_factory=time.time_ns)
    trace_id: str | None = None
    session_id: str | None = None
    request_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {item.name: getattr(self, item.name) for item in fields(self)}


@dataclass(slots=True, kw_only=True)
class ToolsListed(_Base):
    """The router chose which tools a listing shows (the seed's "tool list request" and "decision")."""

    kind: Literal["tools.listed"] = "tools.listed"
    query: str
    selected: tuple[str, ...]
    confidence: float
    fallback_used: bool
    duration_ms: float


@dataclass(slots=True, kw_only=True)
class RouterFallback(_Base):
    """The router was not confident and showed its fallback set instead of its ranking."""

    kind: Literal["router.fallback"] = "router.fallback"
    query: str
    confidence: float
    reason: str


@dataclass(slots=True, kw_only=True)
class CallStarted(_Base):
    """A call entered the pipeline (before its tool is resolved: `tool_id` is what the caller asked)."""

    kind: Literal["call.started"] = "call.started"
    tool_id: str
    fn: str | None = None
    tenant: str | None = None


@dataclass(slots=True, kw_only=True)
class CallEnded(_Base):
    """A call left the pipeline with its typed outcome (or `cancelled` when its caller went away)."""

    kind: Literal["call.ended"] = "call.ended"
    tool: str | None
    version: str | None
    status: str
    code: str | None
    duration_ms: float


@dataclass(slots=True, kw_only=True)
class DownstreamConnected(_Base):
    """A downstream MCP server's session is up (first connect or a reconnect)."""

    kind: Literal["downstream.connected"] = "downstream.connected"
    server: str
    protocol_version: str | None


@dataclass(slots=True, kw_only=True)
class DownstreamDisconnected(_Base):
    """A downstream MCP server's session ended: idle, crashed, stopped."""

    kind: Literal["downstream.disconnected"] = "downstream.disconnected"
    server: str
    reason: str


TraceEvent = (
    ToolsListed | RouterFallback | CallStarted | CallEnded | DownstreamConnected | DownstreamDisconnected
)
EVENT_KINDS: tuple[str, ...] = (
    "tools.listed",
    "router.fallback",
    "call.started",
    "call.ended",
    "downstream.connected",
    "downstream.disconnected",
)


def trace_event_schema() -> dict[str, Any]:
    """The JSON Schema (2020-12) of one trace event: a union on `kind`."""
    adapter: TypeAdapter[Any] = TypeAdapter(Annotated[TraceEvent, Field(discriminator="kind")])
    schema = adapter.json_schema(mode="serialization")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://colonnade.dev/schemas/trace-events.schema.json"
    schema["title"] = "Colonnade trace event"
    return schema


SCHEMA_FILE = "trace-events.schema.json"


def write_schema(folder: Path) -> Path:
    """Write the trace events' JSON Schema into `folder` (`make schemas`); returns the file."""
    path = folder / SCHEMA_FILE
    path.write_text(json.dumps(trace_event_schema(), indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m colonnade.observability.trace_events SCHEMA_FOLDER", file=sys.stderr)
        return 2
    print(write_schema(Path(args[0])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
