"""Real third-party MCP servers behind the gateway, reached with the official SDK client.

Behind one `colonnade serve`: PyPI `mcp-server-time` and `mcp-server-git`, npm `server-filesystem`,
`server-memory` and `server-everything` (stdio, and Streamable HTTP in a process of its own), and
our Python SDK reference server over HTTP. Every server is reached through the aggregate `/mcp`
(namespaced names) and through its own `/servers/{name}/mcp` (original names); every tool call runs
the gateway's pipeline.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

from colonnade.catalog.naming import to_wire
from colonnade.surfaces.mcp.render import RESULT_META_KEY
from tests.federation.conftest import Federation, run_gateway
from tests.support.loopback import stop_process
from tests.support.mcp_client import all_tools
from tests.support.mcp_servers import (
    EVERYTHING,
    FILESYSTEM,
    MEMORY,
    ROOT,
    everything_http,
    git_repo,
    node_stdio,
    python_http,
    venv_stdio,
)

pytestmark = pytest.mark.e2e

MODES = ["auto", "legacy"]


@pytest.fixture(scope="module")
def federation(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Federation]:
    tmp = tmp_path_factory.mktemp("federation")
    files = tmp / "files"
    files.mkdir()
    (files / "notes.txt").write_text("colonnade was here\n")
    processes: list[subprocess.Popen[bytes]] = []
    try:
        everything, everything_url = everything_http(tmp / "everything-http.log")
        processes.append(everything)
        reference, reference_url = python_http(
            ROOT / "tests" / "conformance" / "reference_server.py", tmp / "reference.log"
        )
        processes.append(reference)
        servers = [
            venv_stdio(
                "time", "mcp-server-time", tools={"convert_time": {"description": "Time zones, converted."}}
            ),
            venv_stdio("git", "mcp-server-git", "--repository", str(git_repo(tmp / "repo"))),
            node_stdio("files", FILESYSTEM, str(files), deny_tools=["move_file"]),
            node_stdio("memory", MEMORY, tools={"delete_relations": {"side_effects": "write"}}),
            node_stdio("everything", EVERYTHING, "stdio"),
            {"name": "everything_http", "transport": "http", "url": everything_url},
            # Its test tools come and go at run time: served at once (admission review is
            # tests/federation/test_tool_admission.py's subject; see docs/change-control.md).
            {"name": "reference", "transport": "http", "url": reference_url, "admit": "auto"},
        ]
        with run_gateway(tmp / "gateway", servers) as gateway:
            yield gateway
    finally:
        for process in processes:
            stop_process(process)


def envelope(result: types.CallToolResult) -> dict[str, Any]:
    return dict((result.meta or {})[RESULT_META_KEY])


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


@pytest.mark.parametrize("mode", MODES)
async def test_every_server_is_served_under_namespaced_names(federation: Federation, mode: str) -> None:
    async with Client(federation.mcp, mode=mode) as client:
        names = {tool.name for tool in await all_tools(client)}
    for expected in (
        "default__time__get_current_time",
        "default__git__git_log",
        "default__files__read_text_file",
        "default__memory__create_entities",
        "default__everything__echo",
        "default__everything_http__echo",
        "default__reference__test_simple_text",
    ):
        assert expected in names
    assert "default__files__move_file" not in names  # deny_tools
    status = federation.status()
    assert {s["name"]: s["state"] for s in status["servers"]} == dict.fromkeys(
        ["everything", "everything_http", "files", "git", "memory", "reference", "time"], "ready"
    )
    served = {name for name in names if not name.startswith("colonnade__")}  # the gateway's own tools
    assert status["tools"] == len(served)


async def test_a_servers_own_endpoint_lists_its_tools_as_the_server_does(federation: Federation) -> None:
    direct = StdioServerParameters(command=str(Path(ROOT / ".venv" / "bin" / "mcp-server-time")))
    async with Client(direct) as client:
        upstream = {tool.name: tool for tool in await all_tools(client)}
    async with Client(federation.server("time")) as client:
        served = {tool.name: tool for tool in await all_tools(client)}
    assert sorted(served) == sorted(upstream) == ["convert_time", "get_current_time"]
    assert served["get_current_time"].input_schema == upstream["get_current_time"].input_schema
    assert served["get_current_time"].output_schema == upstream["get_current_time"].output_schema
    assert served["get_current_time"].annotations == upstream["get_current_time"].annotations
    assert served["convert_time"].description == "Time zones, converted."  # the operator's override


@pytest.mark.parametrize("mode", MODES)
async def test_calls_through_the_aggregate_endpoint_run_the_pipeline(
    federation: Federation, mode: str
) -> None:
    async with Client(federation.mcp, mode=mode) as client:
        now = await client.call_tool("default__time__get_current_time", {"timezone": "Europe/Paris"})
        log = await client.call_tool(
            "default__git__git_log", {"repo_path": _repo(federation), "max_count": 1}
        )
        notes = await client.call_tool("default__files__read_text_file", {"path": _notes(federation)})
        echo = await client.call_tool("default__everything__echo", {"message": "hi"})
        echo_http = await client.call_tool("default__everything_http__echo", {"message": "hi"})
    assert now.is_error is False and isinstance(now.structured_content, dict)
    assert now.structured_content["timezone"] == "Europe/Paris"
    assert envelope(now)["provenance"]["tool_id"] == "default:time:get_current_time"
    assert "first commit" in text_of(log)
    assert "colonnade was here" in text_of(notes)
    assert "hi" in text_of(echo) and "hi" in text_of(echo_http)
    assert envelope(echo_http)["status"] == "success"


async def test_the_aggregate_endpoint_passes_the_servers_content_on(federation: Federation) -> None:
    async with Client(federation.mcp, mode="legacy") as client:
        image = await client.call_tool("default__everything__get-tiny-image", {})
        log = await client.call_tool(
            "default__git__git_log", {"repo_path": _repo(federation), "max_count": 1}
        )
    assert any(isinstance(b, types.ImageContent) for b in image.content)
    assert envelope(image)["status"] == "success"
    assert text_of(log).startswith("Commit history:") and "first commit" in text_of(log)  # not JSON-wrapped


async def test_memory_server_keeps_its_state_across_calls(federation: Federation) -> None:
    entity = {"name": "colonnade", "entityType": "gateway", "observations": ["governs tools"]}
    async with Client(federation.mcp) as client:
        created = await client.call_tool("default__memory__create_entities", {"entities": [entity]})
        graph = await client.call_tool("default__memory__read_graph", {})
    assert created.is_error is False, text_of(created)
    assert "governs tools" in json.dumps(graph.structured_content)


@pytest.mark.parametrize("endpoint", ["aggregate", "own"])
async def test_a_destructive_tool_waits_for_approval_and_an_override_lets_one_run(
    federation: Federation, endpoint: str
) -> None:
    url, prefix = (
        (federation.mcp, "default__memory__")
        if endpoint == "aggregate"
        else (federation.server("memory"), "")
    )
    async with Client(url) as client:
        refused = await client.call_tool(f"{prefix}delete_entities", {"entityNames": ["colonnade"]})
        allowed = await client.call_tool(f"{prefix}delete_relations", {"relations": []})
    assert refused.is_error is True
    assert envelope(refused)["status"] == "pending"  # parked for an approver, not run
    assert allowed.is_error is False, text_of(allowed)


async def test_an_upstream_tool_error_keeps_its_message(federation: Federation) -> None:
    missing = {"path": str(Path(_notes(federation)).with_name("missing.txt"))}
    async with Client(federation.mcp) as client:
        aggregate = await client.call_tool("default__files__read_text_file", missing)
    async with Client(federation.server("files")) as client:
        own = await client.call_tool("read_text_file", missing)
    error = envelope(aggregate)["error"]
    assert error["code"] == "S-TOOL-UPSTREAM-ERROR"
    assert "missing.txt" in error["message"] and "ENOENT" in error["message"]
    assert own.is_error is True and text_of(own) == error["message"]
    assert envelope(own)["error"]["code"] == "S-TOOL-UPSTREAM-ERROR"


async def test_a_callers_network_limits_apply_to_a_stdio_server(federation: Federation) -> None:
    meta = {"colonnade/request": {"constraints": {"net_allowlist": ["127.0.0.1"]}}}
    async with Client(federation.mcp) as client:
        refused = await client.call_tool("default__time__get_current_time", {"timezone": "UTC"}, meta=meta)
        meta["colonnade/request"]["constraints"]["net_allowlist"] = ["stdio:time"]
        allowed = await client.call_tool("default__time__get_current_time", {"timezone": "UTC"}, meta=meta)
    assert envelope(refused)["error"]["code"] == "P-PRECOND-NET-DENIED"
    assert allowed.is_error is False


@pytest.mark.parametrize("mode", MODES)
async def test_content_types_pass_through_a_servers_own_endpoint(federation: Federation, mode: str) -> None:
    async with Client(federation.server("everything"), mode=mode) as client:
        image = await client.call_tool("get-tiny-image", {})
        links = await client.call_tool("get-resource-links", {"count": 2})
        structured = await client.call_tool("get-structured-content", {"location": "New York"})
    assert any(isinstance(b, types.ImageContent) and b.mime_type == "image/png" for b in image.content)
    assert sum(isinstance(b, types.ResourceLink) for b in links.content) == 2
    assert isinstance(structured.structured_content, dict) and "temperature" in structured.structured_content
    async with Client(federation.server("reference"), mode=mode) as client:
        audio = await client.call_tool("test_audio_content", {})
        embedded = await client.call_tool("test_embedded_resource", {})
    assert isinstance(audio.content[0], types.AudioContent) and audio.content[0].mime_type == "audio/wav"
    assert isinstance(embedded.content[0], types.EmbeddedResource)
    assert envelope(audio)["provenance"]["tool_id"] == "default:reference:test_audio_content"


@pytest.mark.parametrize("mode", MODES)
async def test_progress_reaches_the_caller(federation: Federation, mode: str) -> None:
    seen: list[tuple[float, float | None]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append((value, total))

    async with Client(federation.server("everything"), mode=mode) as client:
        result = await client.call_tool(
            "trigger-long-running-operation", {"duration": 1, "steps": 3}, progress_callback=progress
        )
    assert result.is_error is False
    assert [value for value, _ in seen] == [1, 2, 3] and {total for _, total in seen} == {3}


@pytest.mark.parametrize("mode", MODES)
async def test_prompts_resources_and_completion_pass_through(federation: Federation, mode: str) -> None:
    async with Client(federation.server("everything"), mode=mode) as client:
        prompts = await client.list_prompts()
        resources = await client.list_resources()
        templates = await client.list_resource_templates()
        first = resources.resources[0]
        read = await client.read_resource(str(first.uri))
        simple = await client.get_prompt("simple-prompt")
    assert "simple-prompt" in {p.name for p in prompts.prompts}
    assert templates.resource_templates and read.contents and str(read.contents[0].uri) == str(first.uri)
    assert simple.messages
    async with Client(federation.server("reference"), mode=mode) as client:
        completion = await client.complete(
            types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
            {"name": "arg1", "value": "par"},
        )
    assert completion.completion.values == ["paris", "park", "party"]


@pytest.mark.parametrize("mode", MODES)
async def test_servers_resources_and_prompts_are_served_on_the_aggregate_endpoint(
    federation: Federation, mode: str
) -> None:
    """`/mcp` lists every server's resources (URIs as the server gave them, the server in `_meta`),
    templates and prompts (namespaced like tools), and reads and gets them from the right server."""
    async with Client(federation.server("everything"), mode=mode) as direct:
        own_resources = (await direct.list_resources()).resources
        own_prompts = {p.name for p in (await direct.list_prompts()).prompts}
        own_templates = (await direct.list_resource_templates()).resource_templates
        direct_read = await direct.read_resource(str(own_resources[0].uri))
    async with Client(federation.mcp, mode=mode) as client:
        resources = (await client.list_resources()).resources
        templates = (await client.list_resource_templates()).resource_templates
        prompts = (await client.list_prompts()).prompts
        first = own_resources[0]
        read = await client.read_resource(str(first.uri))
        simple = await client.get_prompt("default__everything__simple-prompt")
        with pytest.raises(MCPError, match="no prompt named"):
            await client.get_prompt("default__nowhere__simple-prompt")
    by_uri = {str(r.uri): r for r in resources}
    # everything over stdio is configured before everything_http, which lists the same URIs.
    assert {str(r.uri) for r in own_resources} <= set(by_uri)
    shown = by_uri[str(first.uri)]
    assert (shown.meta or {})["colonnade/server"] == "everything"
    assert shown.name == to_wire(f"default:everything:{first.name}")
    assert any((r.meta or {}).get("colonnade/server") == "reference" for r in resources)
    assert {t.uri_template for t in own_templates} <= {t.uri_template for t in templates}
    names = {p.name for p in prompts}
    assert {to_wire(f"default:everything:{name}") for name in own_prompts} <= names
    assert {to_wire(f"default:everything_http:{name}") for name in own_prompts} <= names
    assert read.contents == direct_read.contents
    assert simple.messages


async def test_elicitation_reaches_a_handshake_era_caller(federation: Federation) -> None:
    async def answer(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"username": "ada", "email": "ada@example.com"})

    async with Client(federation.server("reference"), mode="legacy", elicitation_callback=answer) as client:
        result = await client.call_tool("test_elicitation", {"message": "Who are you?"})
    assert "ada@example.com" in text_of(result)


async def test_input_rounds_reach_a_2026_caller(federation: Federation) -> None:
    async def answer(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async with Client(federation.server("reference"), elicitation_callback=answer) as client:
        assert client.protocol_version == "2026-07-28"
        result = await client.call_tool("test_input_required_result_elicitation", {})
    assert text_of(result) == "Hello, Ada!"


async def test_a_servers_new_tools_reach_the_catalog_and_are_announced(federation: Federation) -> None:
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async with (
        Client(federation.mcp, mode="legacy", message_handler=on_message) as listener,
        Client(federation.server("reference")) as client,
    ):
        before = {t.name for t in await all_tools(listener)}
        await client.call_tool("test_trigger_tool_change", {})
        with anyio.fail_after(15):
            await changed.wait()
        after = {t.name for t in await all_tools(listener)}
    added = after - before
    assert len(added) == 1 and next(iter(added)).startswith("default__reference__test_dynamic_tool_")


async def test_concurrent_calls_share_one_session_per_server(federation: Federation) -> None:
    before = federation.server_status("everything_http")

    async def echo(client: Client, n: int) -> str:
        return text_of(await client.call_tool("default__everything_http__echo", {"message": f"m{n}"}))

    async with Client(federation.mcp) as client:
        results = await _gather(*(echo(client, n) for n in range(24)))
    assert all(f"m{n}" in text for n, text in enumerate(results))
    after = federation.server_status("everything_http")
    assert after["calls"] - before["calls"] == 24 and after["errors"] == before["errors"]
    assert after["restarts"] == before["restarts"] == 0 and after["since"] == before["since"]


async def _gather(*calls: Any) -> list[Any]:
    results: list[Any] = [None] * len(calls)

    async def run(index: int, call: Any) -> None:
        results[index] = await call

    async with anyio.create_task_group() as group:
        for index, call in enumerate(calls):
            group.start_soon(run, index, call)
    return results


def _repo(federation: Federation) -> str:
    return str(federation.log.parents[1] / "repo")


def _notes(federation: Federation) -> str:
    return str(federation.log.parents[1] / "files" / "notes.txt")
