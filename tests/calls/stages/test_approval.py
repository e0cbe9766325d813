"""The approval gate without a database: what needs approval, and fail-closed when nobody can be asked.

Parking and tokens need the store; they are tested on SQLite and PostgreSQL in
`tests/governance/test_approval_desk.py` and end to end in `test_approvals_rest.py` / `_mcp.py`.
"""

from __future__ import annotations

import mcp_types as types

from colonnade.calls.approvals import approval_reasons, needs_approval
from colonnade.calls.envelope import CallStatus
from colonnade.calls.stages.approval import ApprovalGate
from colonnade.catalog.catalog import Catalog
from colonnade.catalog.mcp_projection import project_server_tools
from colonnade.config import McpServerSettings
from colonnade.governance.obligations import Obligations
from tests.calls.stages.conftest import Reached, resolved

VOID = {"invoice_id": "INV-2001", "reason": "Issued in error"}


async def test_a_read_tool_passes(catalog: Catalog, reached: Reached) -> None:
    call = resolved(catalog, "acme:billing:list_invoices")
    assert not needs_approval(call)
    assert (await ApprovalGate()(call, reached)).status is CallStatus.SUCCESS
    assert len(reached.calls) == 1


async def test_without_a_workflow_a_destructive_call_is_refused_and_never_reached(
    catalog: Catalog, reached: Reached
) -> None:
    call = resolved(catalog, "acme:billing:void_invoice", input=VOID)
    assert approval_reasons(call) == (
        "acme:billing:void_invoice is destructive",
        "acme:billing:void_invoice requires a human's approval (contract)",
    )
    refused = await ApprovalGate()(call, reached)
    assert refused.status is CallStatus.TERMINAL_ERROR and refused.error is not None
    assert refused.error.code == "P-PRECOND-APPROVAL-REQUIRED" and "no database" in refused.error.message
    assert reached.calls == []


async def test_a_dry_run_of_a_gated_tool_is_refused(catalog: Catalog, reached: Reached) -> None:
    call = resolved(catalog, "acme:billing:void_invoice", input=VOID, dry_run=True)
    refused = await ApprovalGate()(call, reached)
    assert refused.error is not None and "dry run" in refused.error.message
    assert reached.calls == []


async def test_a_policy_obligation_gates_a_read_tool_with_the_policys_reasons(
    catalog: Catalog, reached: Reached
) -> None:
    call = resolved(catalog, "acme:billing:list_invoices").evolve(
        obligations=Obligations(require_approval=True, reasons=("after hours",), policy_version="p-7")
    )
    assert approval_reasons(call) == ("after hours",)
    refused = await ApprovalGate()(call, reached)
    assert refused.error is not None and refused.error.code == "P-PRECOND-APPROVAL-REQUIRED"
    assert reached.calls == []


def test_a_server_tools_reasons_name_what_asked_for_the_approval() -> None:
    """A destructive server tool needs it for that; a read one only because `servers:` says so."""
    catalog = Catalog()
    settings = McpServerSettings(
        name="memory",
        transport="stdio",
        command="node",
        tools={"read_graph": {"requires_human_approval": True}},
    )
    destructive = types.ToolAnnotations(destructive_hint=True)
    listed = [
        types.Tool(
            name="read_graph",
            input_schema={"type": "object"},
            annotations=types.ToolAnnotations(read_only_hint=True),
        ),
        types.Tool(name="delete_entities", input_schema={"type": "object"}, annotations=destructive),
    ]
    catalog.add_tools("mcp:memory", project_server_tools(settings, listed))
    assert approval_reasons(resolved(catalog, "default:memory:read_graph")) == (
        "default:memory:read_graph requires a human's approval"
        " (tools.read_graph of server 'memory' in servers:)",
    )
    assert approval_reasons(resolved(catalog, "default:memory:delete_entities")) == (
        "default:memory:delete_entities is destructive",
    )
