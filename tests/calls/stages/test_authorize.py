"""The authorize stage: one decision per call; a refusal reveals nothing about the tool."""

from __future__ import annotations

from colonnade.calls.call import Call
from colonnade.calls.envelope import CallRequest, CallStatus
from colonnade.calls.manifest import Manifests
from colonnade.calls.stages.authorize import Authorize
from colonnade.catalog.builtins import builtin_tool
from colonnade.catalog.catalog import Catalog
from tests.calls.stages.conftest import Reached, resolved
from tests.support.authorizers import OnlyPrefix


async def test_a_permitted_call_passes_and_others_look_like_unknown_tools(
    catalog: Catalog, reached: Reached
) -> None:
    stage = Authorize(OnlyPrefix("acme:crm:"))
    allowed = await stage(resolved(catalog, "acme:crm:get_customer"), reached)
    assert allowed.status is CallStatus.SUCCESS
    refused = await stage(resolved(catalog, "acme__billing__list_invoices"), reached)
    assert refused.status is CallStatus.INVALID_REQUEST and refused.error is not None
    assert refused.error.code == "I-REQ-UNKNOWN-TOOL"
    assert refused.error.message == "no tool named 'acme__billing__list_invoices'"
    assert refused.provenance is None and refused.side_effects == []
    assert [call.tool.canonical_name for call in reached.calls] == ["acme:crm:get_customer"]


async def test_without_an_authorizer_everything_passes(catalog: Catalog, reached: Reached) -> None:
    result = await Authorize()(resolved(catalog, "acme:billing:list_invoices"), reached)
    assert result.status is CallStatus.SUCCESS


async def test_builtin_tools_are_open_to_every_caller_that_reached_the_pipeline(reached: Reached) -> None:
    search = builtin_tool(
        "search", wire_name="search", title="S", description="S.", input_schema={"type": "object"}
    )
    call = Call.start(CallRequest(tool_id="search"), search, Manifests().for_tool(search))
    assert (await Authorize(OnlyPrefix("acme:crm:"))(call, reached)).status is CallStatus.SUCCESS


async def test_a_persona_s_constraint_is_hinted_alike_for_hidden_and_unknown_tools(
    catalog: Catalog, reached: Reached
) -> None:
    """A developer without a team sees nothing: the refusal says so, in the same words whether the
    tool exists (and is hidden) or not, so the hint reveals no tool."""
    from colonnade.calls.stages.resolve import Resolve
    from colonnade.governance.personas import PERSONA_SCOPES, Persona
    from colonnade.governance.principal import Principal, PrincipalKind
    from colonnade.governance.tool_access import ToolAccess

    scopes = PERSONA_SCOPES[Persona.DEVELOPER]
    developer = Principal(PrincipalKind.USER, "dev", tenant="acme", persona="developer", scopes=scopes)
    authorizer = ToolAccess(catalog)
    tool = catalog.get("acme:crm:get_customer")
    assert tool is not None
    request = CallRequest(tool_id=tool.canonical_name)
    call = Call.start(request, tool, Manifests().for_tool(tool), principal=developer)
    hidden = await Authorize(authorizer)(call, reached)
    unknown = await Resolve(catalog, authorizer=authorizer)(
        Call.start(CallRequest(tool_id="acme:crm:no_such_tool"), principal=developer), reached
    )
    assert hidden.error is not None and unknown.error is not None
    hint = " (a developer sees only its team's APIs, and this credential has no team: create the key"
    assert hidden.error.message.startswith(f"no tool named 'acme:crm:get_customer'{hint}")
    assert unknown.error.message.startswith(f"no tool named 'acme:crm:no_such_tool'{hint}")
    assert hidden.error.code == unknown.error.code == "I-REQ-UNKNOWN-TOOL"
