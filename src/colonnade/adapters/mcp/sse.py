"""Server-sent events as an MCP server streams them over Streamable HTTP: each event's id, data and retry.

Read the way the `mcp` SDK's client reads them (`httpx2`'s `EventSource`): lines up to a blank
line make one event; `data:` lines join with newlines; `id:` names the event (a stream closed early
is resumed from the last id); `retry:` is how long to wait before resuming, in milliseconds. Lines
it does not know (comments, `event:`) are skipped; an event without data is a priming event.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import aiohttp

__all__ = ["Event", "events"]


@dataclass(frozen=True, slots=True)
class Event:
    """One event: its data (empty for a priming event), its id and the retry interval it names."""

    data: str
    id: str | None = None
    retry: int | None = None


async def events(content: aiohttp.StreamReader) -> AsyncIterator[Event]:
    """The events of a stream, in order, until it ends."""
    data: list[str] = []
    event_id: str | None = None
    retry: int | None = None
    seen = False
    async for raw in content:
        line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
        if not line:
            if seen:
                yield Event("\n".join(data), event_id, retry)
            data, event_id, retry, seen = [], None, None, False
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "data":
            data.append(value)
        elif field == "id" and "\0" not in value:
            event_id = value
        elif field == "retry" and value.isdigit():
            retry = int(value)
        else:
            continue
        seen = True
    if seen:
        yield Event("\n".join(data), event_id, retry)
