"""The package's public face: what an embedding program imports from `colonnade` resolves."""

from __future__ import annotations

import subprocess
import sys

import pytest

import colonnade
from colonnade.calls.envelope import CallRequest
from colonnade.runtime.gateway import Gateway


def test_every_public_name_resolves_to_the_real_object() -> None:
    for name in colonnade.__all__:
        assert getattr(colonnade, name) is not None, name
    assert colonnade.Gateway is Gateway and colonnade.CallRequest is CallRequest


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = colonnade.Nope  # type: ignore[attr-defined]


def test_importing_the_package_loads_no_gateway_parts() -> None:
    code = "import colonnade, sys; print(any(m.startswith('colonnade.runtime') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


async def test_an_embedding_program_calls_a_tool_in_process() -> None:
    from colonnade.catalog.catalog import Catalog
    from tests.support.source_tools import source_tool

    catalog = Catalog()
    catalog.add_tools("clock", [source_tool("local:clock:now")])
    gateway = colonnade.Gateway(colonnade.Settings(), catalog=catalog)
    try:
        result = await gateway.calls.call(colonnade.CallRequest(tool_id="local:clock:now"))
    finally:
        await gateway.aclose()
    # The source tool has no binding this gateway can execute: a typed outcome, never an exception.
    assert result.status is colonnade.CallStatus.TERMINAL_ERROR
    assert result.error is not None and result.error.code == "P-PRECOND-NET-UNCHECKED"


def test_all_lists_exactly_the_lazily_loaded_names() -> None:
    assert set(colonnade.__all__) == {"__version__", *colonnade._PUBLIC}
