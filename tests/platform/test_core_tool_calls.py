"""Every core tool called through REST (`/v1/calls`) and the read tools through a real MCP client,
each call leaving its audit record; the write tools change what the catalog, the store and the
subscription book hold, through the same rules as the CLI and REST routes."""

from __future__ import annotations

import time
from typing import Any

import pytest

from colonnade.catalog.bindings import HttpBinding
from colonnade.governance.audit.readers import AuditFilter
from colonnade.governance.personas import Persona
from colonnade.platform import CORE_TOOLS
from tests.support.governed import Governed
from tests.support.platform_personas import persona_token
from tests.support.tenant_contracts import tenant_contract

_OPENAPI = {
    "openapi": "3.1.0",
    "info": {"title": "Notes", "version": "1.0.0"},
    "servers": [{"url": "https://notes.example.com"}],
    "paths": {
        "/notes/{id}": {
            "get": {
                "operationId": "get_note",
                "summary": "Read one note",
                "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
                "responses": {"200": {"description": "the note"}},
            }
        }
    },
}


def _call(governed: Governed, token: str, tool: str, **arguments: Any) -> dict[str, Any]:
    _, body = governed.call(token, f"colonnade__{tool}", **arguments)
    assert body["status"] == "success", (tool, body)
    return dict(body["output"])


def _audited(governed: Governed, tool: str, actor: str) -> list[str]:
    audit = governed.running.gateway.governance.audit
    assert audit is not None
    records = governed.running.run(audit.store.query(AuditFilter(tool=f"colonnade:platform:{tool}"), 1000))
    return [str(record.outcome) for record in records if record.actor == actor]


def _contract(governed: Governed, api: str, version: str, status: str, environment: str) -> dict[str, Any]:
    read = governed.running.gateway.catalog.get("acme:items:read_item")
    assert read is not None and isinstance(read.binding, HttpBinding)
    contract = tenant_contract("acme", api, read.binding.base_url, owner="team-a", environment=environment)
    document = contract.model_dump(mode="json", exclude_none=True)
    return {**document, "version": version, "status": status}


READS: dict[str, dict[str, Any]] = {
    "platform_info": {},
    "health_check": {},
    "list_tools": {"limit": 3},
    "get_tool_schema": {"name": "acme:items:read_item"},
    "get_config": {},
    "list_apis": {},
    "get_api": {"api": "acme:items"},
    "search_apis": {"query": "items"},
    "get_api_versions": {"api": "acme:items"},
    "list_subscriptions": {},
    "get_metrics": {},
    "metrics_time_series": {"subject": "acme:items:read_item"},
    "slow_requests": {"window_minutes": 60},
    "list_errors": {},
    "analyze_errors": {},
    "list_alerts": {"state": "all"},
    "validate_contract": {"contract": {"name": "Not Kebab"}},
    "import_openapi": {"document": _OPENAPI, "api": "notes"},
    "export_openapi": {"api": "acme:items"},
    "export_mcp": {"api": "acme:items"},
    "security_score": {},
    "list_audit_events": {"limit": 5},
    "scan_vulnerabilities": {},
}


def test_the_read_tools_answer_over_rest_and_are_audited(governed: Governed) -> None:
    admin = persona_token(governed, Persona.ADMIN)
    out = {tool: _call(governed, admin, tool, **arguments) for tool, arguments in READS.items()}
    assert out["platform_info"]["caller"]["persona"] == "admin"
    assert out["platform_info"]["apis"] == len(out["list_apis"]["apis"])  # its tenant's: not globex's
    assert out["health_check"]["ok"] is True and out["health_check"]["checks"]["database"]["ok"]
    assert len(out["list_tools"]["tools"]) >= 3 and out["list_tools"]["next_cursor"]
    assert out["get_tool_schema"]["canonical_name"] == "acme:items:read_item"
    assert {"acme:items", "acme:lab"} <= {api["api"] for api in out["list_apis"]["apis"]}
    assert not [api for api in out["list_apis"]["apis"] if api["tenant"] != "acme"]
    assert out["get_api"]["display_name"] == "acme items" and len(out["get_api"]["tool_list"]) == 4
    assert out["search_apis"]["apis"][0]["api"] in ("acme:items", "acme:lab")
    assert out["get_api_versions"]["versions"][0] == {
        **out["get_api_versions"]["versions"][0],
        "version": "1.0.0",
        "status": "published",
        "served": True,
    }
    assert out["validate_contract"]["valid"] is False and out["validate_contract"]["findings"]
    assert [e["operation_id"] for e in out["import_openapi"]["report"]["imported"]] == ["get_note"]
    assert out["export_openapi"]["openapi"]["openapi"].startswith("3.1")
    assert {tool["name"] for tool in out["export_mcp"]["tools"]} == {
        f"acme__items__{t}" for t in ("read_item", "write_item", "drop_item", "audit_item")
    }
    assert 0 <= out["security_score"]["score"] < 100  # the test backends are plain http, without credentials
    failed = {check["name"] for check in out["security_score"]["checks"] if not check["ok"]}
    assert {"tls", "backends_authenticated"} <= failed
    assert out["scan_vulnerabilities"]["scanned_tools"] >= 8  # acme's tools: items, lab (and notes, if made)
    for tool in READS:
        assert _audited(governed, tool, "user:admin-1") == ["success"], tool


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_read_tools_answer_over_mcp_with_structured_content(governed: Governed, mode: str) -> None:
    async with governed.mcp(
        persona_token(governed, Persona.ADMIN, sub=f"mcp-admin-{mode}"), mode=mode
    ) as client:
        for tool, arguments in READS.items():
            result = await client.call_tool(f"colonnade__{tool}", arguments)
            assert not result.is_error, (tool, result.content)
            assert isinstance(result.structured_content, dict), tool
    assert _audited(governed, "export_mcp", f"user:mcp-admin-{mode}") == ["success"]


def test_errors_are_listed_explained_and_grouped_for_their_tenant_only(governed: Governed) -> None:
    developer = persona_token(governed, Persona.DEVELOPER)
    trace = "4bf92f3577b34da6a3ce929d0e0e4736"
    with governed.rest(developer) as client:  # item_id not a string: invalid_request
        arguments = {"item_id": 7, "password": "hunter2-secret"}
        request = {"tool_id": "acme:lab:read_item", "input": arguments, "context": {"trace_id": trace}}
        bad = client.post("/v1/calls", json=request).json()
    assert bad["error"]["code"] == "I-REQ-SCHEMA"
    governed.call(
        governed.token(Persona.ADMIN, tenant="globex", sub="g"), "globex:items:read_item", item_id=1
    )
    listed = _call(governed, developer, "list_errors", window_minutes=10)["errors"]
    assert bad["call_id"] in [e["call_id"] for e in listed]
    assert all(e["tool"].startswith(("acme:", "colonnade:")) for e in listed)  # globex's error is not shown
    details = _call(governed, developer, "get_error_details", call_id=bad["call_id"])
    assert details["code"] == "I-REQ-SCHEMA" and details["fix"] and details["trace_id"] == trace
    analysis = _call(governed, developer, "analyze_errors", window_minutes=10)
    assert {"code": "I-REQ-SCHEMA", "tool": "acme:lab:read_item"} in [
        {"code": g["code"], "tool": g["tool"]} for g in analysis["groups"]
    ]
    assert analysis["top_fixes"][0]["fix"]
    for _ in range(200):  # the snapshot is written off the call's path
        _, snapped = governed.call(developer, "colonnade__get_error_snapshot", call_id=bad["call_id"])
        if snapped["status"] == "success":
            break
        time.sleep(0.05)
    snapshot = snapped["output"]
    assert snapshot["code"] == "I-REQ-SCHEMA" and snapshot["trace_id"] == trace
    assert snapshot["arguments"]["item_id"] == 7 and snapshot["arguments"]["password"] != "hunter2-secret"
    assert snapshot["envelope"]["error"]["code"] == "I-REQ-SCHEMA" and "hunter2-secret" not in str(snapshot)
    other = governed.token(Persona.DEVELOPER, team="team-b", sub="dev-b")  # may not see acme:lab
    assert governed.call(other, "colonnade__get_error_snapshot", call_id=bad["call_id"])[1]["error"][
        "code"
    ] == ("I-REQ-UNKNOWN-RESOURCE")
    metrics = _call(governed, developer, "get_metrics")
    shown = {t["tool"] for t in metrics["tools"]}
    assert "acme:lab:read_item" in shown and not [t for t in shown if t.startswith("globex:")]


def test_an_api_is_created_deployed_deprecated_and_undeployed_only_after_approval(governed: Governed) -> None:
    developer, owner = (
        persona_token(governed, Persona.DEVELOPER),
        persona_token(governed, Persona.PRODUCT_OWNER),
    )
    made = _call(
        governed, developer, "create_api", contract=_contract(governed, "notes", "1.0.0", "published", "dev")
    )
    assert made == {**made, "api": "acme:notes", "status": "published", "served_version": "1.0.0"}
    prod = governed.call(
        developer,
        "colonnade__create_api",
        contract=_contract(governed, "ledger", "1.0.0", "published", "prod"),
    )[1]
    assert prod["error"]["code"] == "A-AUTH-FORBIDDEN" and "non-production" in prod["error"]["message"]
    draft = _call(
        governed, developer, "create_api", contract=_contract(governed, "notes", "1.1.0", "draft", "dev")
    )
    assert draft["status"] == "draft" and draft["served_version"] == "1.0.0"
    wrong = governed.call(
        developer, "colonnade__deploy_api", api="acme:notes", version="1.1.0", environment="prod"
    )[1]
    assert wrong["error"]["code"] in ("A-AUTH-FORBIDDEN", "I-REQ-GOVERNANCE")
    deployed = _call(governed, developer, "deploy_api", api="notes", version="1.1.0", environment="dev")
    assert deployed["served_version"] == "1.1.0"
    assert (
        _call(governed, owner, "deprecate_api", api="acme:notes", version="1.1.0")["served_version"]
        == "1.0.0"
    )
    pending = governed.call(owner, "colonnade__undeploy_api", api="acme:notes")[1]
    assert (
        pending["status"] == "pending"
        and governed.running.gateway.catalog.active_version("acme", "notes") == "1.0.0"
    )
    for tool in ("create_api", "deploy_api", "deprecate_api"):
        assert "success" in _audited(governed, tool, "user:developer-1") + _audited(
            governed, tool, "user:product_owner-1"
        )
    audit = governed.running.gateway.governance.audit
    assert audit is not None
    kinds = [r.kind for r in governed.running.run(audit.store.query(AuditFilter(tenant="acme"), 1000))]
    assert "contract.publish" in kinds and "contract.deprecate" in kinds


def test_subscriptions_are_requested_decided_and_ended_and_keys_rotated(governed: Governed) -> None:
    consumer, owner = (
        persona_token(governed, Persona.CONSUMER),
        persona_token(governed, Persona.PRODUCT_OWNER),
    )
    asked = _call(governed, consumer, "create_subscription", api="acme:lab")
    assert asked["state"] == "pending" and asked["subscriber"] == "user:consumer-1"
    assert _call(governed, consumer, "get_subscription", subscription_id=asked["id"])["api"] == "lab"
    refused = governed.call(consumer, "acme:lab:read_item", item_id="I-1")[1]
    assert refused["error"]["code"] == "A-AUTH-SUBSCRIPTION-REQUIRED"
    approved = _call(governed, owner, "update_subscription", subscription_id=asked["id"], decision="approve")
    assert approved["state"] == "active"
    assert governed.call(consumer, "acme:lab:read_item", item_id="I-1")[1]["status"] == "success"
    mine = _call(governed, consumer, "list_subscriptions")["subscriptions"]
    assert [s["id"] for s in mine] == [asked["id"]]
    assert _call(governed, consumer, "revoke_subscription", subscription_id=asked["id"])["state"] == "revoked"
    assert (
        governed.call(consumer, "acme:lab:read_item", item_id="I-1")[1]["error"]["code"]
        == "A-AUTH-SUBSCRIPTION-REQUIRED"
    )
    with governed.rest(persona_token(governed, Persona.SECURITY)) as client:
        made = client.post("/v1/keys", json={"owner": "bob", "persona": "consumer"})
        assert made.status_code == 201, made.text
        key_id = made.json()["key"]["id"]
    rotated = _call(governed, persona_token(governed, Persona.ADMIN), "rotate_api_key", key_id=key_id)
    assert rotated["token"] and rotated["key"]["id"] != key_id and "secret_hash" not in rotated["key"]
    assert _audited(governed, "rotate_api_key", "user:admin-1") == ["success"]


def test_every_core_tool_is_called_in_this_module() -> None:
    called = set(READS) | {
        "get_error_details",
        "get_error_snapshot",
        "create_api",
        "deploy_api",
        "deprecate_api",
        "undeploy_api",
        "get_subscription",
        "create_subscription",
        "update_subscription",
        "revoke_subscription",
        "rotate_api_key",
    }
    assert called == {core.name for core in CORE_TOOLS}


def test_a_security_officer_rotates_a_key_only_once_an_admin_approved(governed: Governed) -> None:
    officer = persona_token(governed, Persona.SECURITY, sub="officer-2")
    with governed.rest(officer) as client:
        made = client.post("/v1/keys", json={"owner": "carol", "persona": "consumer"})
        assert made.status_code == 201, made.text
    key_id = made.json()["key"]["id"]
    _, asked = governed.call(officer, "colonnade__rotate_api_key", key_id=key_id)
    assert asked["status"] == "pending" and asked["pending"]["reason"] == "awaiting_approval", asked
    approval = asked["pending"]["token"]
    with governed.rest(officer) as client:
        keys = {k["id"]: k for k in client.get("/v1/keys").json()["keys"]}
    assert keys[key_id]["replaced_by"] is None  # nothing rotated yet
    with governed.rest(officer) as client:  # four eyes: not by the officer itself
        assert client.post(f"/v1/approvals/{approval}/approve", json={}).status_code == 403
    with governed.rest(persona_token(governed, Persona.ADMIN)) as client:
        decided = client.post(f"/v1/approvals/{approval}/approve", json={"run": True})
    assert decided.status_code == 200, decided.text
    result = decided.json()["result"]
    assert result["status"] == "success", result["error"]
    assert result["output"]["replaces"] == key_id
    with governed.rest(officer) as client:
        keys = {k["id"]: k for k in client.get("/v1/keys").json()["keys"]}
    assert keys[key_id]["replaced_by"] == result["output"]["key"]["id"]
