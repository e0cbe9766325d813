"""Store fixtures: repositories and contract documents.

The database fixtures (`database_url`, `empty_engine`, `engine`, ...) come from
`tests/support/databases.py`: every store test runs on SQLite and on PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.contracts.model import Contract
from colonnade.store import ContractStore


@pytest.fixture
def store(engine: AsyncEngine) -> ContractStore:
    return ContractStore(engine)


def contract_data(**overrides: Any) -> dict[str, Any]:
    """A small valid CRM contract document; keyword arguments replace top-level fields."""
    data: dict[str, Any] = {
        "name": "crm",
        "version": "1.0.0",
        "tenant": "acme",
        "display_name": "Acme CRM",
        "description": "Customers of Acme.",
        "status": "published",
        "backend": {"base_url": "https://crm.example.com"},
        "endpoints": [
            {
                "path": "/customers/{customer_id}",
                "methods": ["GET"],
                "operation_id": "getCustomer",
                "llm": {
                    "summary": "Get one customer by id.",
                    "intent": "Use when the user names a customer id.",
                    "tool_name": "get_customer",
                    "side_effects": "read",
                    "safe_for_agents": True,
                    "requires_human_approval": False,
                    "examples": [{"input": {"customer_id": "c-1"}, "expected_output_contains": "c-1"}],
                },
            },
            {"path": "/customers", "methods": ["GET", "POST"], "operation_id": "customers"},
        ],
    }
    data.update(overrides)
    return data


@pytest.fixture
def make_contract() -> Callable[..., Contract]:
    def make(**overrides: Any) -> Contract:
        return Contract.model_validate(contract_data(**overrides))

    return make
