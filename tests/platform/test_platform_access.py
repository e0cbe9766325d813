"""`PlatformAccess` without a gateway: ADR-012's rows decide core tools, the wrapped authorizer every
other tool; a caller the base lets see everything sees every core tool; an allowed security write
carries the approval obligation through the authorize stage, and the policy stage keeps it."""

from __future__ import annotations

from colonnade.calls.call import Call
from colonnade.calls.envelope import CallRequest, CallResult, CallStatus
from colonnade.calls.manifest import Manifests
from colonnade.calls.stages.authorize import Authorize
from colonnade.catalog.catalog import Catalog
from colonnade.governance.authorization import AllowAll
from colonnade.governance.obligations import Obligations
from colonnade.governance.personas import PERSONA_SCOPES, Persona
from colonnade.governance.principal import Principal, PrincipalKind
from colonnade.governance.tool_access import ToolAccess
from colonnade.platform import CORE_TOOLS, PlatformAccess, core_decision
from colonnade.routing.permits import permits

_BY_NAME = {core.name: core for core in CORE_TOOLS}


def _principal(
    persona: Persona, *, scopes: frozenset[str] | None = None, allow: tuple[str, ...] | None = None
) -> Principal:
    granted = PERSONA_SCOPES[persona] if scopes is None else scopes
    kind = PrincipalKind.AGENT if persona is Persona.AGENT else PrincipalKind.USER
    return Principal(
        kind, f"{persona}-1", tenant="acme", persona=persona.value, scopes=granted, allowed_tools=allow
    )


def test_each_row_decides_its_personas_and_nothing_else() -> None:
    access = PlatformAccess(ToolAccess(Catalog()), CORE_TOOLS)
    for core in CORE_TOOLS:
        for persona in Persona:
            allow = (core.canonical_name,) if persona is Persona.AGENT else None
            caller = _principal(persona, allow=allow)
            decision = access.decide(caller, core.tool)
            assert decision.visible is (persona in core.personas), (core.name, persona)
            assert permits(access.visible(caller), core.canonical_name) is (persona in core.personas)
            assert decision.allowed is (persona in core.personas)
            assert bool(decision.approval) is (
                decision.allowed and persona is Persona.SECURITY and core.writes
            )


def test_an_agent_needs_the_tool_on_its_allow_list_and_a_glob_reaches_it() -> None:
    listed = _BY_NAME["list_apis"]
    assert not core_decision(_principal(Persona.AGENT, allow=("acme:items:*",)), listed).visible
    assert core_decision(_principal(Persona.AGENT, allow=("colonnade:platform:*",)), listed).allowed
    config = _BY_NAME["get_config"]  # never an agent's, whatever its list says
    assert not core_decision(_principal(Persona.AGENT, allow=("colonnade:platform:*",)), config).visible


def test_a_token_without_the_scope_sees_the_tool_but_is_refused() -> None:
    reads = frozenset(s for s in PERSONA_SCOPES[Persona.ADMIN] if not s.endswith(":write"))
    decision = core_decision(_principal(Persona.ADMIN, scopes=reads), _BY_NAME["create_api"])
    assert decision.visible and not decision.allowed and decision.code == "A-AUTH-FORBIDDEN"


def test_without_authentication_and_for_the_gateway_itself_every_core_tool_is_open() -> None:
    loopback = PlatformAccess(AllowAll(), CORE_TOOLS)
    anonymous = Principal(PrincipalKind.ANONYMOUS, "loopback")
    assert loopback.visible(anonymous) is None
    assert all(loopback.decide(anonymous, core.tool).allowed for core in CORE_TOOLS)
    governed = PlatformAccess(ToolAccess(Catalog()), CORE_TOOLS)
    assert all(governed.decide(Principal.system("sweep"), core.tool).allowed for core in CORE_TOOLS)


async def test_the_authorize_stage_puts_the_approval_on_a_security_officers_write() -> None:
    rotate = _BY_NAME["rotate_api_key"].tool
    officer = _principal(Persona.SECURITY)
    call = Call.start(
        CallRequest(tool_id=rotate.wire_name), rotate, Manifests().for_tool(rotate), principal=officer
    )
    reached: list[Call] = []

    async def last(passed: Call) -> CallResult:
        reached.append(passed)
        return passed.result(CallStatus.SUCCESS, output={})

    stage = Authorize(PlatformAccess(ToolAccess(Catalog()), CORE_TOOLS))
    assert (await stage(call, last)).status is CallStatus.SUCCESS
    owed = reached[0].obligations
    assert owed.require_approval and "security officer" in owed.reasons[0]
    later = owed.joined(Obligations(redact_output_fields=("token",), policy_version="v1"))
    assert (
        later.require_approval and later.redact_output_fields == ("token",) and later.policy_version == "v1"
    )
