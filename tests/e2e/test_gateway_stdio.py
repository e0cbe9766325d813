"""`colonnade serve --stdio` as a real child process of the official client, in both eras."""

from __future__ import annotations

import pytest
from mcp import Client, StdioServerParameters

from tests.e2e.conftest import COLONNADE, Stack

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_stdio_lists_and_calls(
    stack: Stack, mode: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    env = {**stack.env, "COLONNADE_DATA_DIR": str(tmp_path_factory.mktemp("stdio"))}
    params = StdioServerParameters(command=str(COLONNADE), args=["serve", "--stdio"], env=env)
    async with Client(params, mode=mode) as client:  # type: ignore[arg-type]
        tools = (await client.list_tools()).tools
        assert len(tools) == 11
        result = await client.call_tool("acme__crm__get_customer", {"customer_id": "C-1002"})
    assert result.is_error is False
    assert isinstance(result.structured_content, dict) and result.structured_content["id"] == "C-1002"
