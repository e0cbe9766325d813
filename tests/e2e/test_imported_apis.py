"""What a new user tried, end to end: public OpenAPI documents imported and served, and the ADR's example.

The public petstore and a Spotify-like document are imported with the real CLI, served by a real
gateway process next to the contract ADR's example endpoint, against a real backend on loopback,
and driven by the official MCP client in both protocol eras, over HTTP and over stdio. Array and
string results (petstore's `findPetsByStatus` and `loginUser`, Spotify's `check-*` operations) used
to break `tools/list` as a whole on 2025-11-25 and reached 2026-07-28 clients as bare arrays.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters

from colonnade.contracts.example_match import output_contains
from tests.support.loopback import free_port, serve_in_thread, start_process, stop_process, wait_http
from tests.support.public_apis_backend import PETS_TOKEN, SPOTIFY_TOKEN, PublicApis
from tests.support.repo import ROOT

pytestmark = pytest.mark.e2e

COLONNADE = Path(sys.executable).with_name("colonnade")
OPENAPI = ROOT / "tests" / "fixtures" / "openapi"
ADR_EXAMPLE = ROOT / "tests" / "fixtures" / "contracts" / "adr_customer.json"
OFFLINE = "http://127.0.0.1:9"
MODES = ["auto", "legacy"]
FIND_PETS = "acme__pets__find_pets_by_status"
LOGIN = "acme__pets__login_user"
SAVED_ALBUMS = "acme__spotify__check_users_saved_albums"
ADR_TOOL = "acme__customers__customer_get_customer"


@dataclass
class Served:
    backend: PublicApis
    mcp_url: str
    contracts: list[Path]
    env: dict[str, str]
    log: Path


def _import(spec: str, api: str, base_url: str, dest: Path, env: dict[str, str]) -> Path:
    out = dest / f"{api}.yaml"
    args = ["contract", "import-openapi", str(OPENAPI / spec), "--tenant", "acme", "--api", api]
    run = subprocess.run(
        [str(COLONNADE), *args, "--base-url", base_url, "-o", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    return out


def _adr_contract(backend_url: str, dest: Path) -> Path:
    """The ADR's endpoint as written, its backend_url moved to loopback, the contract's base URL offline."""
    data = json.loads(ADR_EXAMPLE.read_text(encoding="utf-8"))
    data["backend"]["base_url"] = OFFLINE  # only the endpoint's own backend_url can answer
    endpoint = data["endpoints"][0]
    endpoint["backend_url"] = endpoint["backend_url"].replace("https://backend.example.com", backend_url)
    out = dest / "customers.json"
    out.write_text(json.dumps(data), encoding="utf-8")
    return out


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("imported")
    backend = PublicApis()
    with serve_in_thread(backend.app()) as backend_url:
        env = {k: v for k, v in os.environ.items() if not k.startswith("COLONNADE_")}
        env |= {
            "COLONNADE_DATA_DIR": str(tmp / "data"),
            "COLONNADE_SECRET_PETS_PETSTORE_AUTH": PETS_TOKEN,
            "COLONNADE_SECRET_SPOTIFY_OAUTH_2_0": SPOTIFY_TOKEN,
        }
        contracts = [
            _import("petstore_public.yaml", "pets", f"{backend_url}/api/v3", tmp, env),
            _import("spotify_like.yaml", "spotify", f"{backend_url}/v1", tmp, env),
            _adr_contract(backend_url, tmp),
        ]
        port, log = free_port(), tmp / "gateway.log"
        args = ["serve", "--port", str(port), *(a for c in contracts for a in ("-C", str(c)))]
        gateway = start_process([str(COLONNADE), *args], log, cwd=tmp, env=env)
        try:
            wait_http(f"http://127.0.0.1:{port}/readyz", gateway, log=log)
            yield Served(backend, f"http://127.0.0.1:{port}/mcp", contracts, env, log)
        finally:
            stop_process(gateway)


async def _listed(client: Client) -> list[types.Tool]:
    tools: list[types.Tool] = []
    cursor: str | None = None
    while True:
        page = await client.list_tools(cursor=cursor, cache_mode="bypass")
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools


async def _lists_and_wraps(client: Client) -> dict[str, Any]:
    """Every tool listed; array and string results arrive wrapped, as their listed schemas say."""
    tools = {tool.name: tool for tool in await _listed(client)}
    assert len(tools) == 9 + 10 + 1  # petstore (less the binary upload), Spotify, the ADR's endpoint
    for tool in tools.values():
        assert tool.output_schema is None or tool.output_schema["type"] == "object", tool.name
    pets = await client.call_tool(FIND_PETS, {"status": "sold"})  # the client checks the output schema
    login = await client.call_tool(LOGIN, {"username": "ada"})
    saved = await client.call_tool(SAVED_ALBUMS, {"ids": "a,b,c"})
    return {
        "pets": pets.structured_content,
        "login": login.structured_content,
        "saved": saved.structured_content,
        "errors": [r.is_error for r in (pets, login, saved)],
    }


def _assert_wrapped(seen: dict[str, Any]) -> None:
    assert seen["errors"] == [False, False, False]
    assert seen["pets"] == {"result": [{**seen["pets"]["result"][0], "status": "sold"}]}
    assert seen["login"] == {"result": "logged in user session:ada"}
    assert seen["saved"] == {"result": [True, False, True]}


@pytest.mark.parametrize("mode", MODES)
async def test_imported_apis_are_listed_and_results_wrapped_over_http(served: Served, mode: str) -> None:
    async with Client(served.mcp_url, mode=mode) as client:  # type: ignore[arg-type]
        assert client.protocol_version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
        _assert_wrapped(await _lists_and_wraps(client))


@pytest.mark.parametrize("mode", MODES)
async def test_imported_apis_are_listed_and_results_wrapped_over_stdio(
    served: Served, mode: str, tmp_path: Path
) -> None:
    env = {**served.env, "COLONNADE_DATA_DIR": str(tmp_path / "data")}
    args = ["serve", "--stdio", *(a for c in served.contracts for a in ("-C", str(c)))]
    params = StdioServerParameters(command=str(COLONNADE), args=args, env=env, cwd=str(tmp_path))
    async with Client(params, mode=mode) as client:  # type: ignore[arg-type]
        _assert_wrapped(await _lists_and_wraps(client))


@pytest.mark.parametrize("mode", MODES)
async def test_the_adr_example_is_served_through_its_own_backend_url(served: Served, mode: str) -> None:
    async with Client(served.mcp_url, mode=mode) as client:  # type: ignore[arg-type]
        result = await client.call_tool(ADR_TOOL, {"id": "cust_123"})
    assert result.is_error is False, result.content
    assert output_contains(result.structured_content, {"id": "cust_123"})
    assert {"path": "/customers/customers/cust_123"}.items() <= served.backend.seen[-1].items()


async def test_credentials_come_from_backend_auth_never_from_arguments(served: Served) -> None:
    async with Client(served.mcp_url) as client:
        tools = {tool.name: tool for tool in await _listed(client)}
        await client.call_tool("acme__pets__get_pet_by_id", {"petId": 10})
    assert list(tools["acme__pets__delete_pet"].input_schema["properties"]) == ["petId"]  # no api_key
    assert served.backend.seen[-1]["authorization"] == f"Bearer {PETS_TOKEN}"
    assert all(request["api_key"] is None for request in served.backend.seen)


def test_serve_said_which_drafts_still_need_review(served: Served) -> None:
    log = served.log.read_text(encoding="utf-8")
    assert "acme/pets 1.0.26-SNAPSHOT" in log and "is a draft with" in log
    assert "  - security scheme petstore_auth: oauth2: obtain an access token for the gateway" in log
    assert "  - GET /store/inventory: needs api_key, but backend.auth sends petstore_auth" in log


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
def test_the_smoke_proves_wrapped_results_and_object_expectations(served: Served, protocol: str) -> None:
    run = subprocess.run(
        [str(COLONNADE), "smoke", "--url", served.mcp_url, "--protocol", protocol, "--format", "json"]
        + [str(c) for c in served.contracts],
        capture_output=True,
        text=True,
        env=served.env,
        timeout=120,
    )
    report = json.loads(run.stdout)
    failed = [r for r in report["results"] if r["status"] == "FAIL"]
    assert run.returncode == 0 and failed == [], failed or run.stderr
    passed = {(r["tool"], r["check"]) for r in report["results"] if r["status"] == "PASS"}
    assert {
        ("acme:spotify:get_an_album", "example 0 runs"),  # an object expected inside an object
        ("acme:spotify:check_users_saved_albums", "example 0 runs"),  # a string inside a wrapped array
        ("acme:customers:customer_get_customer", "example 0 runs"),  # the ADR's own example
    } <= passed
