"""Tool documents: what of a catalog tool or a benchmark row the index searches, field by field."""

from __future__ import annotations

from typing import Any

from colonnade.catalog import project_contract
from colonnade.contracts.model import Contract
from colonnade.routing.documents import FIELDS, ToolDoc, doc_from_benchmark, doc_from_tool, field_texts

CONTRACT: dict[str, Any] = {
    "name": "crm",
    "version": "1.0.0",
    "tenant": "acme",
    "display_name": "Acme CRM",
    "description": "Customer records.",
    "status": "published",
    "backend": {"base_url": "http://127.0.0.1:8766/"},
    "endpoints": [
        {
            "path": "/customers/{customer_id}",
            "methods": ["GET"],
            "operation_id": "getCustomerByID",
            "tags": ["crm"],
            "input_schema": {
                "type": "object",
                "properties": {
                    "customer_id": {"type": "string", "x-in": "path", "description": "Customer id"}
                },
                "required": ["customer_id"],
            },
            "llm": {
                "summary": "Fetch one customer.",
                "intent": "Use when you have a customer id.",
                "tool_name": "get_customer",
                "side_effects": "read",
                "safe_for_agents": True,
                "requires_human_approval": False,
                "examples": [{"input": {"customer_id": "C-1"}, "expected_output_contains": "id"}],
            },
        },
        {
            "path": "/health",
            "methods": ["GET"],
            "operation_id": "health",
            "description": "Liveness of the CRM backend.",
            "input_schema": {"type": "object", "properties": {"verbose": {"type": "boolean"}}},
        },
    ],
}


def _docs() -> dict[str, ToolDoc]:
    tools = project_contract(Contract.model_validate(CONTRACT))
    return {doc.id: doc for doc in map(doc_from_tool, tools)}


def test_a_tool_with_an_llm_block_is_indexed_from_summary_intent_and_parameters() -> None:
    doc = _docs()["acme:crm:get_customer"]
    assert (doc.name, doc.summary, doc.intent, doc.description) == (
        "get_customer",
        "Fetch one customer.",
        "Use when you have a customer id.",
        "",
    )
    assert doc.params == (("customer_id", "Customer id"),)
    assert (doc.server, doc.tags) == ("acme:crm", ("crm",))


def test_a_tool_without_an_llm_block_keeps_its_description_without_the_inputs_line() -> None:
    doc = _docs()["acme:crm:health"]
    assert doc.description == "Liveness of the CRM backend."
    assert doc.params == (("verbose", ""),)


def test_benchmark_rows_keep_server_title_and_description_as_server_text() -> None:
    doc = doc_from_benchmark({
        "id": "yahoo-finance/get_news", "name": "get_news", "description": "Latest news.",
        "input_schema": {"properties": {"symbol": {"title": "Symbol", "description": "Ticker"}}},
        "server": "yahoo-finance", "server_title": "MCP Yahoo Finance",
        "server_description": "Pricing and news.", "category": "Finance",
    })  # fmt: skip
    assert doc.server == "yahoo-finance"
    assert doc.server_description == "MCP Yahoo Finance Pricing and news."
    assert doc.params == (("symbol", "Symbol Ticker"),)
    assert doc.tags == ("Finance",)


def test_field_texts_follow_the_field_order() -> None:
    doc = ToolDoc("x", "get_x", summary="S.", intent="I.", description="D.", params=(("p", "P."),),
                  server="srv", tags=("t1", "t2"), server_description="About.")  # fmt: skip
    texts = dict(zip(FIELDS, field_texts(doc), strict=True))
    assert texts == {
        "name": "get_x", "summary": "S. I.", "description": "D.", "params": "p P.",
        "server": "srv About.", "tags": "t1 t2",
    }  # fmt: skip


def test_a_document_needs_an_id() -> None:
    try:
        ToolDoc("", "name")
    except ValueError as exc:
        assert "non-empty id" in str(exc)
    else:
        raise AssertionError("an empty id was accepted")
