"""Fast unit tests of single stages: a real catalog, a fake `next`, no process, no database."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from colonnade.calls.call import Call
from colonnade.calls.envelope import CallRequest, CallResult, CallStatus
from colonnade.calls.manifest import Manifests
from colonnade.catalog.catalog import Catalog
from tests.support.demo_catalog import demo_catalog


@pytest.fixture
def catalog() -> Catalog:
    return demo_catalog()


class Reached:
    """A fake `next`: remembers the calls that got past the stage and answers success."""

    def __init__(self) -> None:
        self.calls: list[Call] = []

    async def __call__(self, call: Call) -> CallResult:
        self.calls.append(call)
        return call.result(CallStatus.SUCCESS, output={"reached": True})


@pytest.fixture
def reached() -> Reached:
    return Reached()


def resolved(catalog: Catalog, name: str, **fields: object) -> Call:
    """A call of a catalog tool, resolved as the resolve stage would."""
    tool = catalog.get(name)
    assert tool is not None
    return Call.start(CallRequest(tool_id=name, **fields), tool, Manifests().for_tool(tool))  # type: ignore[arg-type]


Factory = Callable[..., Call]
