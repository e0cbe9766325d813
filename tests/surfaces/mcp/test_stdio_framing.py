"""`colonnade serve --stdio` answers a line that is not JSON-RPC (-32700, -32600) and keeps serving."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO

import mcp_types as types
import pytest
from pydantic import ValidationError

from colonnade.surfaces.mcp.stdio_framing import malformed_answer

COLONNADE = Path(sys.executable).with_name("colonnade")
PING = '{"jsonrpc": "2.0", "id": %d, "method": "ping"}'


def test_a_stdio_server_answers_every_line_it_cannot_read(tmp_path: Path) -> None:
    lines = ["hello, not json", PING % 1, "[1, 2]", "", '{"foo": 1, "id": 9}', '{"jsonrpc": "2.0"', PING % 2]
    env = {k: v for k, v in os.environ.items() if not k.startswith("COLONNADE_")}
    proc = subprocess.Popen(
        [str(COLONNADE), "serve", "--stdio"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env={**env, "COLONNADE_DATA_DIR": str(tmp_path / "data")},
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write("".join(line + "\n" for line in lines))
        proc.stdin.flush()
        written = _lines_of(proc.stdout)
        answers = [json.loads(_next(written, timeout_s=60)) for _ in range(6)]
    finally:
        proc.stdin.close()  # end of input: the server stops
        proc.wait(timeout=60)
    assert proc.stderr is not None and "Traceback" not in proc.stderr.read()
    shapes = [(a["id"], a.get("error", {}).get("code"), "result" in a) for a in answers]
    assert shapes == [
        (None, -32700, False),
        (1, None, True),
        (None, -32600, False),
        (9, -32600, False),  # the blank line is skipped; a line with an id is answered with it
        (None, -32700, False),
        (2, None, True),
    ], answers
    assert "one JSON-RPC 2.0 message per line" in answers[0]["error"]["message"]


def _lines_of(stream: IO[str]) -> queue.Queue[str]:
    """The lines the server writes, read by a thread: select() on a buffered text stream misses lines
    that readline() already pulled into the buffer, so it could wait out its deadline with the answer
    in hand."""
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for line in stream:
            lines.put(line)

    threading.Thread(target=read, daemon=True).start()
    return lines


def _next(lines: queue.Queue[str], timeout_s: float) -> str:
    """The next line, or a failure once the timeout passes (no hanging test)."""
    try:
        return lines.get(timeout=timeout_s)
    except queue.Empty:
        raise AssertionError("the stdio server did not answer") from None


def test_a_blank_line_is_not_answered() -> None:
    with pytest.raises(ValidationError) as blank:
        types.jsonrpc_message_adapter.validate_json("  \n", by_name=False)
    assert malformed_answer(blank.value) is None
