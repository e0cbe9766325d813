"""Small real organs for tests, written with `FunctionOrgan` like any organ author would.

`lab` has a pure function, one that waits (for queue caps and deadlines), one that fails on
purpose, one that raises by mistake, one that reaches the network and one that spends CPU; it
records every stimulus its functions receive, so a test can prove that a bad input was never
sent.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, Field

from colonnade.organs import FunctionOrgan, FunctionSlo, OrganError
from colonnade.organs.card_files import write_cards

__all__ = ["RECEIVED", "lab", "write_lab_cards"]

RECEIVED: list[tuple[str, dict[str, object]]] = []

lab = FunctionOrgan(
    "lab",
    version="2.1.0",
    description="A test organ: arithmetic, waiting, failing on purpose and by mistake.",
    division="testing",
    subsystem="fixtures",
    tags=["testing", "fixtures", "arithmetic"],
    author="tests",
)


class Sum(BaseModel):
    total: int


@lab.function(
    tags=["arithmetic", "pure"],
    examples=[{"input": {"a": 1, "b": 2}, "output": {"total": 3}}, {"input": {"a": -1, "b": 1}}],
    side_effects=[],
    idempotent=True,
    slo=FunctionSlo(p95_latency_ms=5),
)
def add(a: int, b: Annotated[int, Field(ge=-1000, le=1000)] = 0) -> Sum:
    """Add two integers."""
    RECEIVED.append(("add", {"a": a, "b": b}))
    return Sum(total=a + b)


@lab.function(
    tags=["timing", "waiting"],
    examples=[{"input": {"seconds": 0.01}}, {"input": {"seconds": 0.2}}],
    side_effects=["write"],
    idempotent=False,
    slo=FunctionSlo(queue_cap=1, p95_latency_ms=1),
)
async def wait(seconds: Annotated[float, Field(ge=0, le=30)]) -> dict[str, float]:
    """Wait for a while, then answer how long."""
    RECEIVED.append(("wait", {"seconds": seconds}))
    await asyncio.sleep(seconds)
    return {"waited": seconds}


@lab.function(
    tags=["failing", "conflict"],
    examples=[{"input": {"why": "busy"}}, {"input": {"why": "locked"}}],
    side_effects=["write"],
    idempotent=False,
)
def refuse(why: str) -> dict[str, str]:
    """Always refuse with a conflict."""
    raise OrganError("Conflict", f"refused: {why}", why=why)


@lab.function(
    tags=["failing", "bug"],
    examples=[{"input": {}}, {"input": {"secret": "s3cret"}}],
    side_effects=[],
    idempotent=True,
)
def crash(secret: str = "") -> dict[str, str]:
    """Raise by mistake (a bug)."""
    raise ZeroDivisionError(f"the message may quote {secret}")


@lab.function(
    tags=["network", "fetch"],
    examples=[{"input": {"url": "https://example.com"}}, {"input": {"url": "https://example.org"}}],
    side_effects=["network"],
    idempotent=True,
)
def fetch(url: str) -> dict[str, str]:
    """Pretend to fetch a URL (declares the network effect; reaches nothing)."""
    return {"url": url}


@lab.function(
    tags=["cpu", "busy"],
    examples=[{"input": {"rounds": 1000}}, {"input": {"rounds": 10}}],
    side_effects=[],
    idempotent=True,
)
async def spin(rounds: Annotated[int, Field(ge=1, le=10_000_000)]) -> dict[str, int]:
    """Spend CPU on the event loop (a coroutine)."""
    total = 0
    for index in range(rounds):
        total += index * index
    return {"total": total}


def write_lab_cards(folder: Path) -> Path:
    """The lab organ's cards, with its entrypoint, in `folder`."""
    card = lab.describe().model_copy(update={"entrypoint": "tests.support.organs:lab"})
    write_cards(card, folder)
    return folder
