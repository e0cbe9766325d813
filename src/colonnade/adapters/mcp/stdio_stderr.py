"""A stdio server's stderr: passed on to the gateway's stderr tagged with the server's name, its last
lines kept, so a server that exits (a missing API key, a bad argument) is reported with its own words
in `last_error` instead of a bare "connection closed".
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections import deque
from collections.abc import AsyncIterator
from typing import Any, BinaryIO, TextIO

from colonnade.adapters.sandbox.launch import MARKER

__all__ = ["StderrTail"]

_CHUNK = 65536
_LINE_CHARS = 300
_DRAIN_S = 0.5


class StderrTail:
    """The last lines one stdio server wrote to stderr during its current process."""

    def __init__(self, name: str, *, keep: int = 5) -> None:
        self.name = name
        self.lines: deque[str] = deque(maxlen=keep)
        self.violation: dict[str, Any] | None = None
        """What the sandbox launcher said about the process's end (`violation`, `message`), if anything."""
        self.ended = asyncio.Event()
        """Set when the current process's stderr reached its end (its last words are all read)."""

    def said(self) -> str:
        """Its last lines, oldest first, joined by ` | ` (empty when it said nothing)."""
        return " | ".join(self.lines)

    @contextlib.asynccontextmanager
    async def capture(self) -> AsyncIterator[TextIO]:
        """A pipe for the process's stderr; read until the process ends (then briefly drained)."""
        self.lines.clear()
        self.violation = None
        self.ended = asyncio.Event()
        read_fd, write_fd = os.pipe()
        pipe, writer = os.fdopen(read_fd, "rb"), os.fdopen(write_fd, "w")
        reader = asyncio.create_task(self._read(pipe), name=f"colonnade-mcp-{self.name}-stderr")
        reader.add_done_callback(lambda _: pipe.close())  # also when it is cancelled before it ran
        try:
            yield writer
        finally:
            writer.close()  # the child holds its own copy: end of file comes when it exits
            try:
                await asyncio.wait_for(asyncio.shield(reader), _DRAIN_S)
            except Exception:  # TimeoutError (a grandchild keeps the pipe open), or a failed read
                pass
            finally:
                reader.cancel()

    def spawned(self, writer: TextIO) -> None:
        """The process has its copy of the pipe; drop ours so its exit ends the reading."""
        writer.close()

    async def violation_after_exit(self, wait_s: float) -> dict[str, Any] | None:
        """The launcher's word on the process's end, waiting up to `wait_s` for the rest of stderr."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.ended.wait(), wait_s)
        return self.violation

    async def _read(self, pipe: BinaryIO) -> None:
        loop = asyncio.get_running_loop()
        stream = asyncio.StreamReader(limit=_CHUNK)
        transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stream), pipe)
        partial = b""
        try:
            while chunk := await stream.read(_CHUNK):
                *complete, partial = (partial + chunk).split(b"\n")
                if len(partial) > _CHUNK:  # a line without end: shown in pieces
                    complete.append(partial)
                    partial = b""
                for line in complete:
                    self._line(line)
            if partial:
                self._line(partial)
        finally:
            transport.close()
            self.ended.set()

    def _line(self, raw: bytes) -> None:
        text = raw.decode("utf-8", "replace").rstrip("\r")
        sys.stderr.write(f"[server {self.name}] {text}\n")
        sys.stderr.flush()
        if text.startswith(MARKER):
            with contextlib.suppress(ValueError):
                record = json.loads(text[len(MARKER) :])
                if isinstance(record, dict):
                    self.violation = record
                    text = f"sandbox: {record.get('message')}"
        if text.strip():
            self.lines.append(text.strip()[:_LINE_CHARS])
