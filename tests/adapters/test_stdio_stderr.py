"""A stdio server's stderr: tagged on the way to the gateway's, its last lines kept, never in the way."""

from __future__ import annotations

import asyncio
import sys
import time

import pytest

from colonnade.adapters.mcp.stdio_stderr import StderrTail

SAYS = "import sys; sys.stderr.write('starting\\n\\nERROR: FOO_API_KEY is not set'); sys.exit(3)"


async def test_the_last_lines_are_kept_and_passed_on_tagged(capsys: pytest.CaptureFixture[str]) -> None:
    tail = StderrTail("keyless", keep=5)
    async with tail.capture() as errlog:
        process = await asyncio.create_subprocess_exec(sys.executable, "-c", SAYS, stderr=errlog)
        tail.spawned(errlog)
        assert await process.wait() == 3
    assert tail.said() == "starting | ERROR: FOO_API_KEY is not set"
    assert "[server keyless] ERROR: FOO_API_KEY is not set\n" in capsys.readouterr().err


async def test_a_pipe_held_open_by_another_process_neither_blocks_nor_swallows_a_cancel() -> None:
    tail = StderrTail("holder")
    entered = asyncio.Event()

    async def run() -> None:
        processes: list[asyncio.subprocess.Process] = []
        try:
            async with tail.capture() as errlog:
                processes.append(await asyncio.create_subprocess_exec("sleep", "5", stderr=errlog))
                tail.spawned(errlog)
                entered.set()
        finally:
            for process in processes:
                process.kill()
                await process.wait()

    started = time.monotonic()
    await run()  # the drain waits briefly for an end of file that does not come, then goes on
    assert time.monotonic() - started < 3

    task = asyncio.create_task(run())
    await entered.wait()
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
