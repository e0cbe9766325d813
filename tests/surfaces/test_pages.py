"""The HTML pages of a real gateway (store, router, pipeline) over the demo backend, both on loopback."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2
import pytest
import yaml

from colonnade import __version__
from colonnade.catalog.tool import Tool
from colonnade.cli._launch import _print_banner
from colonnade.cli.common import err_console
from colonnade.contracts.llm_ready import verdicts
from colonnade.contracts.model import SideEffects
from colonnade.contracts.validate import load_contract
from colonnade.observability.metrics import UNRESOLVED_TOOL
from tests.support.source_tools import source_tool
from tests.surfaces.rest_harness import (
    ROOT,
    RunningGateway,
    demo_contract_file,
    gateway_settings,
    serve_gateway,
)

PAGES = ["/ui/catalog", "/ui/catalog?q=refund+invoice", "/ui/tools/acme:crm:get_customer", "/ui/metrics"]
HOSTILE = "<script>alert(1)</script>"


@pytest.fixture(scope="module")
def running(backend_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningGateway]:
    """Read-only: no test using it makes a call, so its metrics stay empty."""
    folder = tmp_path_factory.mktemp("gateway")
    contracts = [demo_contract_file(folder, name, backend_url) for name in ("crm", "billing")]
    with serve_gateway(gateway_settings(folder / "data", contracts)) as running:
        yield running


@pytest.fixture(scope="module")
def client(running: RunningGateway) -> httpx2.Client:
    return running.client


def page(client: httpx2.Client, path: str, status: int = 200, **params: str) -> str:
    response = client.get(path, params=params)
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    return response.text


def row(body: str, key: str, value: str) -> str:
    """The one table row marked `data-<key>="<value>"`."""
    rows = re.findall(rf'<tr data-{key}="{re.escape(value)}"[^>]*>(.*?)</tr>', body, re.DOTALL)
    assert len(rows) == 1, (value, len(rows))
    return str(rows[0])


def ranked(body: str) -> list[str]:
    return [tool for tool, _ in re.findall(r'<tr data-tool="([^"]+)" data-rank="(\d+)"', body)]


def cell(table_row: str, status: str) -> int:
    found = re.search(rf'data-status="{status}">(\d+)</td>', table_row)
    assert found is not None, (status, table_row)
    return int(found.group(1))


# -- layout ---------------------------------------------------------------------------------------


def test_root_redirects_to_the_catalog(client: httpx2.Client) -> None:
    response = client.get("/", follow_redirects=False)
    assert response.status_code == 307
    assert response.headers["location"] == "/ui/catalog"


@pytest.mark.parametrize("path", PAGES)
def test_every_page_shares_the_layout_and_loads_nothing_from_elsewhere(
    client: httpx2.Client, path: str
) -> None:
    response = client.get(path)
    body = response.text
    assert response.status_code == 200
    assert body.startswith("<!DOCTYPE html>")
    assert '<meta charset="utf-8">' in body
    assert '<a href="/ui/catalog"' in body and '<a href="/ui/metrics"' in body
    assert f"gateway {__version__}" in body
    assert "<script" not in body
    assert not re.search(r'(?:src|href|action)="(?:https?:)?//', body), "no external resources"
    assert "url(" not in body and "@import" not in body
    policy = response.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "style-src 'sha256-" in policy
    assert response.headers["x-content-type-options"] == "nosniff"


# -- catalog --------------------------------------------------------------------------------------


def test_catalog_lists_every_tool_grouped_by_api_with_badges(
    client: httpx2.Client, running: RunningGateway
) -> None:
    body = page(client, "/ui/catalog")
    tools = running.gateway.catalog.tools()
    assert len(tools) == 11
    for tool in tools:
        assert tool.wire_name in row(body, "tool", tool.canonical_name)
    assert '<p id="totals" class="muted">11 tools in 2 APIs</p>' in body
    assert body.index("acme:billing</a> <span") < body.index("acme:crm</a> <span")
    assert "5 tools · version 1.0.0" in body and "6 tools · version 1.0.0" in body
    void = row(body, "tool", "acme:billing:void_invoice")
    assert 'class="badge se-destructive"' in void and "approval required" in void and "not for agents" in void
    check = row(body, "tool", "acme:crm:validate_email_format")
    assert 'class="badge se-none"' in check and "no approval" in check and "not for agents" not in check
    assert 'class="badge se-write"' in row(body, "tool", "acme:billing:create_invoice")
    assert 'class="badge se-read"' in row(body, "tool", "acme:crm:get_customer")


def test_catalog_shows_each_contract_tools_llm_ready_verdict(client: httpx2.Client) -> None:
    """The badge agrees with `contract validate --llm-ready` on the same contract, tool by tool."""
    body = page(client, "/ui/catalog")
    expected: dict[str, list[str]] = {}
    for name in ("crm", "billing"):
        contract = load_contract(ROOT / "examples" / "contracts" / f"{name}.yaml")
        for verdict in verdicts(contract):
            expected[f"acme:{name}:{verdict.tool}"] = sorted({code for code, _ in verdict.failing})
    assert any(expected.values()) and not all(expected.values())  # both kinds are on the page
    for tool, failing in expected.items():
        shown = row(body, "tool", tool)
        if failing:
            assert f'data-llm-failing="{" ".join(failing)}"' in shown, (tool, shown)
            assert f"not LLM-ready: {', '.join(failing)}" in shown
        else:
            assert 'class="badge llm-ready"' in shown and "not LLM-ready" not in shown, (tool, shown)
    tool_page = page(client, "/ui/tools/acme:crm:update_customer")
    assert "not LLM-ready: R4" in tool_page
    assert re.search(r'<ul id="llm-ready"><li><code>R4</code> typed input: the input schema', tool_page)
    assert '<p id="llm-ready">Meets the seven' in page(client, "/ui/tools/acme:crm:get_customer")


def test_api_filter_shows_one_api_and_an_unknown_api_is_a_404(client: httpx2.Client) -> None:
    billing = page(client, "/ui/catalog", api="acme:billing")
    assert 'data-tool="acme:billing:refund_invoice"' in billing
    assert 'data-tool="acme:crm:' not in billing
    assert '<option value="acme:billing" selected>' in billing
    missing = page(client, "/ui/catalog", 404, api="acme:payroll")
    assert "No API named &#x27;acme:payroll&#x27;" in missing
    assert 'href="/ui/catalog?api=acme%3Acrm"' in missing and "data-tool=" not in missing


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("refund a paid invoice", "acme:billing:refund_invoice"),
        ("delete a customer record", "acme:crm:delete_customer"),
        ("is this e-mail address well formed", "acme:crm:validate_email_format"),
    ],
)
def test_search_ranks_tools_with_the_gateways_router(
    client: httpx2.Client, running: RunningGateway, query: str, expected: str
) -> None:
    body = page(client, "/ui/catalog", q=query)
    order = ranked(body)
    assert order[0] == expected
    decision = running.gateway.router.route(query, k=11)
    assert order == decision.selected
    first = row(body, "tool", expected)
    assert f"{decision.scores[expected]:.3f}</td>" in first
    for reason in decision.reasons[expected]:
        assert f"<li>{reason}</li>".replace("'", "&#x27;") in first
    assert f'value="{query}"' in body


def test_search_within_one_api_ranks_only_its_tools(client: httpx2.Client) -> None:
    order = ranked(page(client, "/ui/catalog", q="invoice", api="acme:crm"))
    assert order and all(tool.startswith("acme:crm:") for tool in order)
    nothing = page(client, "/ui/catalog", q="zzqxv wwyk")
    assert ranked(nothing) == [] and "No tool matches" in nothing


# -- one tool -------------------------------------------------------------------------------------


def test_tool_page_by_canonical_or_wire_name(
    client: httpx2.Client, running: RunningGateway, backend_url: str
) -> None:
    body = page(client, "/ui/tools/acme:billing:refund_invoice")
    assert page(client, "/ui/tools/acme__billing__refund_invoice") == body
    assert page(client, "/ui/tools/refund_invoice") == body  # the contract's bare llm.tool_name
    assert "<title>Refund invoice · Colonnade</title>" in body
    assert 'data-argument="invoice_id"' in body and 'data-argument="reason"' in body
    schema = re.search(r'<pre id="input-schema"><code>(.*?)</code></pre>', body, re.DOTALL)
    assert schema is not None and "&quot;^INV-[0-9]+$&quot;" in schema.group(1)
    assert "&quot;closing_reason&quot;" in body.split('id="output-schema"')[1]
    assert '<span class="badge se-destructive"' in body and "approval required" in body
    assert "INV-2006" in body.split('id="example-1"')[1]
    assert '<span id="versions">1.0.0 (served)</span>' in body
    assert "&quot;colonnade/requires_human_approval&quot;: true" in body
    tool = running.gateway.catalog.get("acme:billing:refund_invoice")
    assert tool is not None and tool.digest in body
    limits = running.gateway.manifests.for_tool(tool).limits
    assert f"<dd>{limits.timeout_ms_default} ms</dd>" in body and limits.timeout_ms_default == 5000
    assert backend_url not in body and "base_url" not in body


def test_tool_page_lists_every_known_version(
    running: RunningGateway, backend_url: str, tmp_path: Path
) -> None:
    newer = demo_contract_file(tmp_path, "billing", backend_url, version="1.1.0")
    running.run(running.gateway.publish_files([newer]))
    body = page(running.client, "/ui/tools/acme:billing:get_invoice")
    assert '<span id="versions">1.0.0, 1.1.0 (served)</span>' in body
    assert '<span id="version">1.1.0</span>' in body


def test_unknown_tool_is_a_404_page_that_suggests_names(client: httpx2.Client) -> None:
    body = page(client, "/ui/tools/acme__crm__get_customers", 404)
    suggestion = re.search(r'<p id="did-you-mean">(.*?)</p>', body, re.DOTALL)
    assert suggestion is not None
    assert suggestion.group(1).index('href="/ui/tools/acme__crm__get_customer"') < suggestion.group(1).index(
        "delete_customer"
    )
    assert "did-you-mean" not in page(client, "/ui/tools/zzz", 404)


@pytest.mark.parametrize("path", ["/ui/tools/acme/crm/get_customer", "/ui/tools/acme:crm:get_customer/x"])
def test_unknown_tool_with_a_slash_is_the_404_page(client: httpx2.Client, path: str) -> None:
    response = client.get(path, follow_redirects=False)
    assert response.status_code == 404
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    assert "default-src 'none'" in response.headers["content-security-policy"]
    suggestion = re.search(r'<p id="did-you-mean">(.*?)</p>', response.text, re.DOTALL)
    assert suggestion is not None and 'href="/ui/tools/acme:crm:get_customer"' in suggestion.group(1)


def upstream_tool(canonical: str, wire: str) -> Tool:
    """A tool of a non-contract source (e.g. an upstream MCP server), whose names no contract rule checked."""
    return source_tool(
        canonical, wire, title="Read a file", description="Reads one file of the upstream server.",
        side_effects=SideEffects.READ,
    )  # fmt: skip


@contextmanager
def gateway_with(tool: Tool, backend_url: str, tmp_path: Path) -> Iterator[httpx2.Client]:
    """A fresh gateway serving the CRM contract plus `tool` from a non-contract source."""
    contracts = [demo_contract_file(tmp_path, "crm", backend_url)]
    with serve_gateway(gateway_settings(tmp_path / "data", contracts)) as fresh:

        async def add() -> None:
            fresh.gateway.catalog.add_tools("files", [tool])

        fresh.run(add())
        yield fresh.client


def test_links_to_tools_of_other_sources_reach_those_tools(backend_url: str, tmp_path: Path) -> None:
    tool = upstream_tool("acme:files:files/read", "acme.files.read?raw#1")
    with gateway_with(tool, backend_url, tmp_path) as client:
        listed = row(page(client, "/ui/catalog"), "tool", tool.canonical_name)
        link = re.search(r'<a href="([^"]+)"><code>', listed)
        assert link is not None
        body = page(client, link.group(1))
        assert "<h1>Read a file " in body
        as_json = re.search(r'As JSON: <a href="([^"]+)">', body)
        assert as_json is not None
        detail = client.get(as_json.group(1).replace("&amp;", "&"))
        assert detail.status_code == 200, detail.text
        assert detail.json()["canonical_name"] == tool.canonical_name


def test_the_json_link_of_a_tool_whose_wire_name_holds_a_slash_reaches_rest(
    backend_url: str, tmp_path: Path
) -> None:
    with gateway_with(upstream_tool("acme:files:write", "acme.files/write"), backend_url, tmp_path) as client:
        body = page(client, "/ui/tools/acme:files:write")
        as_json = re.search(r'As JSON: <a href="([^"]+)">', body)
        assert as_json is not None
        detail = client.get(as_json.group(1))
        assert detail.status_code == 200, detail.text
        assert detail.json()["wire_name"] == "acme.files/write"


# -- protection -----------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/", *PAGES, "/ui/tools/zzz"])
def test_foreign_hosts_and_origins_are_refused_like_rest_reads(client: httpx2.Client, path: str) -> None:
    for header, value in (("host", "attacker.example"), ("origin", "http://attacker.example")):
        rest = client.get("/v1/tools", headers={header: value})
        refused = client.get(path, headers={header: value}, follow_redirects=False)
        assert refused.status_code == rest.status_code == (421 if header == "host" else 403)
        assert "A-AUTH-ORIGIN" in refused.text and value in refused.text
        assert "data-tool=" not in refused.text and "data-argument" not in refused.text
    own = client.get(path, headers={"origin": str(client.base_url).rstrip("/")}, follow_redirects=False)
    assert own.status_code in (200, 307, 404)


def hostile_contract(directory: Path, backend_url: str) -> Path:
    """The demo CRM as API `hostile`, with markup in every kind of text a page shows."""
    path = demo_contract_file(directory, "crm", backend_url, display_name=HOSTILE, description=HOSTILE)
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["name"] = "hostile"
    endpoint = next(e for e in data["endpoints"] if e["operation_id"] == "get_customer")
    endpoint["description"] = HOSTILE
    endpoint["llm"].update(summary=HOSTILE, intent=HOSTILE)
    endpoint["llm"]["examples"][0]["expected_output_contains"] = HOSTILE
    arguments = endpoint["input_schema"]["properties"]
    arguments["customer_id"]["description"] = HOSTILE
    arguments[HOSTILE] = {"type": "string", "enum": [HOSTILE], "description": HOSTILE}
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_contract_text_is_escaped_everywhere(backend_url: str, tmp_path: Path) -> None:
    hostile = hostile_contract(tmp_path, backend_url)
    with serve_gateway(gateway_settings(tmp_path / "data", [hostile])) as hostile_gateway:
        tool = hostile_gateway.gateway.catalog.get("acme:hostile:get_customer")
        assert tool is not None and tool.llm is not None and tool.llm.summary == HOSTILE
        client = hostile_gateway.client
        for path, params in (
            ("/ui/catalog", {}),
            ("/ui/catalog", {"q": "alert script"}),
            ("/ui/catalog", {"q": HOSTILE, "api": HOSTILE}),
            ("/ui/tools/acme:hostile:get_customer", {}),
        ):
            body = client.get(path, params=params).text
            assert "<script" not in body, (path, params)
            assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body, (path, params)
        unknown = client.get("/ui/tools/<img src=x onerror=alert(1)>")
        assert unknown.status_code == 404
        assert "<img" not in unknown.text and "&lt;img src=x onerror=alert(1)&gt;" in unknown.text


# -- metrics --------------------------------------------------------------------------------------


def test_metrics_page_shows_real_calls_by_status(backend_url: str, tmp_path: Path) -> None:
    contracts = [demo_contract_file(tmp_path, name, backend_url) for name in ("crm", "billing")]
    with serve_gateway(gateway_settings(tmp_path / "data", contracts)) as fresh:
        client = fresh.client
        before = page(client, "/ui/metrics")
        assert 'id="no-calls"' in before and "11 tools" in before
        calls = [
            ({"tool_id": "acme:crm:get_customer", "input": {"customer_id": "C-1001"}}, "success"),
            ({"tool_id": "acme:crm:get_customer", "input": {"customer_id": "C-1002"}}, "success"),
            ({"tool_id": "acme:crm:get_customer", "input": {"customer_id": "C-9999"}}, "terminal_error"),
            ({"tool_id": "acme:crm:get_customer", "input": {"customer_id": "nope"}}, "invalid_request"),
            ({"tool_id": "acme:billing:list_invoices", "input": {}}, "success"),
            ({"tool_id": "acme:crm:no_such_tool", "input": {}}, "invalid_request"),
        ]
        for body, status in calls:
            assert client.post("/v1/calls", json=body).json()["status"] == status
        after = page(client, "/ui/metrics")
    assert 'id="no-calls"' not in after
    assert '<dd id="total-calls">6</dd>' in after
    tools_called = re.search(r"<dt>Tools called</dt><dd[^>]*>(\d+)</dd>", after)
    assert tools_called is not None and tools_called.group(1) == "2"  # not the unresolved series too
    assert '<dd id="unresolved-calls">1</dd>' in after
    customer = row(after, "tool", "acme:crm:get_customer")
    assert [
        cell(customer, s) for s in ("success", "retryable_error", "terminal_error", "invalid_request")
    ] == [
        2,
        0,
        1,
        1,
    ]
    assert cell(row(after, "tool", "acme:billing:list_invoices"), "success") == 1
    assert cell(row(after, "tool", UNRESOLVED_TOOL), "invalid_request") == 1
    assert 'data-tool="acme:billing:refund_invoice"' not in after
    schema_errors = row(after, "code", "I-REQ-SCHEMA")
    assert '<td class="num">1</td>' in schema_errors and "acme:crm:get_customer" in schema_errors
    assert 'data-code="I-REQ-UPSTREAM-NOT-FOUND"' in after and 'data-code="I-REQ-UNKNOWN-TOOL"' in after
    assert "estimate" in after and re.search(r"≈ [0-9.]+ (?:ms|µs|s)</td>", customer)


def test_the_banner_names_the_catalog_page(running: RunningGateway) -> None:
    with err_console.capture() as captured:
        _print_banner(running.gateway, "http://127.0.0.1:8765/mcp", snippet=False)
    assert "Catalog: http://127.0.0.1:8765/ui/catalog" in captured.get()


def test_without_authentication_nobody_logs_in_and_the_audit_page_is_open(client: httpx2.Client) -> None:
    login = client.get("/ui/login")
    assert login.status_code == 307 and login.headers["location"] == "/ui/catalog"
    audit = page(client, "/ui/audit")
    assert "Chain intact" in audit and 'id="visitor"' not in audit and 'id="logout"' not in audit
    assert client.post("/ui/logout", data={}).status_code == 404  # no sessions without authentication
    decided = client.post("/ui/approvals/ap_x/approve", data={"csrf_token": "x"})
    assert decided.status_code == 403 and "need a logged-in page session (A-AUTH-CSRF)" in decided.text
