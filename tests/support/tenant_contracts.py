"""Contracts of two tenants over the fault backend, for governance tests: one read, one write, one
destructive and one tool not safe for agents per API, with an owning team and an environment.

The tools are `{tenant}:{api}:read_item` (read), `write_item` (write), `drop_item` (destructive,
approval-gated) and `audit_item` (a read that is not safe for agents). Every effect the backend
executes lands in its ledger, so a test can prove that a refused call did nothing.
"""

from __future__ import annotations

from typing import Any

from colonnade.contracts.model import Contract

__all__ = ["TOOLS", "tenant_contract"]

TOOLS = ("read_item", "write_item", "drop_item", "audit_item")
_FAULT = {"type": "string", "x-in": "header", "x-name": "X-Fault"}


def _llm(tool: str, effects: str, *, safe: bool = True, approval: bool = False) -> dict[str, Any]:
    return {
        "summary": f"{tool.replace('_', ' ').capitalize()} of the test backend",
        "intent": f"Use in governance tests to {tool.replace('_', ' ')}",
        "tool_name": tool,
        "side_effects": effects,
        "safe_for_agents": safe,
        "requires_human_approval": approval,
        "examples": [],
    }


def _schema(**properties: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {**properties, "fault": _FAULT},
        "required": sorted(properties),
        "additionalProperties": False,
    }


def tenant_contract(
    tenant: str, api: str, base_url: str, *, owner: str = "team-a", environment: str | None = "prod"
) -> Contract:
    item_id = {"type": "string"}
    document: dict[str, Any] = {
        "name": api,
        "version": "1.0.0",
        "tenant": tenant,
        "display_name": f"{tenant} {api}",
        "description": "Items of the fault backend, for governance tests.",
        "status": "published",
        "owner": owner,
        "backend": {"base_url": base_url},
        "endpoints": [
            {
                "path": "/items/{item_id}",
                "methods": ["GET"],
                "operation_id": "read_item",
                "input_schema": _schema(item_id=item_id),
                "llm": _llm("read_item", "read"),
            },
            {
                "path": "/items/{item_id}",
                "methods": ["PUT"],
                "operation_id": "write_item",
                "input_schema": _schema(item_id=item_id, value={"type": "string"}),
                "llm": _llm("write_item", "write"),
            },
            {
                "path": "/items/{item_id}/drop",
                "methods": ["DELETE"],
                "operation_id": "drop_item",
                "input_schema": _schema(item_id=item_id),
                "llm": _llm("drop_item", "destructive", safe=False, approval=True),
            },
            {
                "path": "/items/{item_id}/audit",
                "methods": ["GET"],
                "operation_id": "audit_item",
                "input_schema": _schema(item_id=item_id),
                "llm": _llm("audit_item", "read", safe=False),
            },
        ],
    }
    if environment is not None:
        document["environment"] = environment
    return Contract.model_validate(document)
