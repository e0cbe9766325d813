"""A realistic contract for the catalog tests: every side effect, with and without `llm` blocks."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from colonnade.contracts.model import Contract

CUSTOMER = {
    "type": "object",
    "properties": {"id": {"type": "string"}, "name": {"type": "string"}},
    "required": ["id", "name"],
}


def llm(summary: str, intent: str, tool_name: str, side_effects: str, **extra: Any) -> dict[str, Any]:
    block: dict[str, Any] = {
        "summary": summary,
        "intent": intent,
        "tool_name": tool_name,
        "side_effects": side_effects,
        "safe_for_agents": side_effects in ("none", "read", "write"),
        "requires_human_approval": side_effects == "destructive",
        "examples": [{"input": {}, "expected_output_contains": "id"}],
    }
    block.update(extra)
    return block


CRM: dict[str, Any] = {
    "name": "crm",
    "version": "1.0.0",
    "tenant": "acme",
    "display_name": "Acme CRM",
    "description": "Customer records.",
    "status": "published",
    "backend": {"base_url": "http://127.0.0.1:8766/", "timeout_ms": 5000},
    "endpoints": [
        {
            "path": "/customers",
            "methods": ["GET"],
            "operation_id": "searchCustomers",
            "tags": ["crm", "search"],
            "input_schema": {
                "type": "object",
                "properties": {
                    "q": {"type": "string", "description": "Text to look for."},
                    "limit": {"type": "integer", "x-in": "query", "minimum": 1},
                },
                "required": ["q"],
                "additionalProperties": False,
            },
            "output_schema": {"type": "object", "properties": {"customers": {"type": "array"}}},
            "llm": llm(
                "Search customers by name or e-mail",
                "Use when you know part of a name but not the customer id.",
                "search_customers",
                "read",
            ),
        },
        {
            "path": "/customers/{customer_id}",
            "methods": ["GET"],
            "operation_id": "getCustomerByID",
            "input_schema": {
                "type": "object",
                "properties": {
                    "customer_id": {"type": "string", "x-in": "path"},
                    "request_id": {"type": "string", "x-in": "header", "x-name": "X-Request-Id"},
                },
                "required": ["customer_id"],
            },
            "output_schema": CUSTOMER,
            "llm": llm("Fetch one customer.", "Use when you have a customer id.", "get_customer", "read"),
        },
        {
            "path": "/customers",
            "methods": ["POST"],
            "operation_id": "create_customer",
            "input_schema": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "email": {"type": "string"}},
                "required": ["name", "email"],
            },
            "llm": llm("Create a customer.", "Use for a new customer.", "create_customer", "write"),
        },
        {
            "path": "/customers/{customer_id}",
            "methods": ["PUT"],
            "operation_id": "replace_customer",
            "llm": llm("Replace a customer.", "Use to overwrite a record.", "replace_customer", "write"),
        },
        {
            "path": "/customers/{customer_id}",
            "methods": ["DELETE"],
            "operation_id": "delete_customer",
            "llm": llm("Delete a customer!", "Use only on request.", "delete_customer", "destructive"),
        },
        {
            "path": "/customers/{customer_id}/merge",
            "methods": ["POST"],
            "operation_id": "merge_customer",
            "llm": llm("Merge duplicates.", "Use to fold a duplicate away.", "merge_customer", "destructive"),
        },
        {
            "path": "/utils/validate-email",
            "methods": ["GET"],
            "operation_id": "validate_email",
            "input_schema": {
                "type": "object",
                "properties": {"email": {"type": "string"}},
                "required": ["email"],
            },
            "llm": llm("Check an e-mail address.", "Use before storing one.", "validate_email", "none"),
        },
        {
            "path": "/health",
            "methods": ["GET"],
            "operation_id": "health",
            "description": "  Liveness of the CRM backend.  ",
            "input_schema": {"type": "object", "properties": {}},
        },
        {"path": "/sessions/{session_id}", "methods": ["DELETE"], "operation_id": "end_session"},
        {"path": "/tags", "methods": ["PATCH"], "operation_id": "retag"},
        {"path": "/notes/{note_id}", "methods": ["GET", "PUT"], "operation_id": "note"},
        {"path": "/internal/reindex", "methods": ["POST"], "operation_id": "reindex", "mcp": False},
    ],
}


@pytest.fixture
def crm_data() -> dict[str, Any]:
    """A fresh copy of the CRM contract document, to change before validating it."""
    return copy.deepcopy(CRM)


@pytest.fixture
def crm(crm_data: dict[str, Any]) -> Contract:
    return Contract.model_validate(crm_data)
