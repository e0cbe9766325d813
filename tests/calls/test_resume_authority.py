"""ResumeAuthority: the owner, in its tenant, while the authorize stage still lets it call the tool.

Fast checks with the real `ToolAccess` authorizer over the two-phase fixture contract (no backend, no
database); the end-to-end matrix over REST and MCP is `tests/governance/test_parked_call_binding.py`.
"""

from __future__ import annotations

from pathlib import Path

from colonnade.calls.decision_note import taking_note
from colonnade.calls.resume_authority import ParkedOwner, ResumeAuthority
from colonnade.catalog.catalog import Catalog
from colonnade.governance.personas import PERSONA_SCOPES, Persona
from colonnade.governance.policy.gate import PolicyGate
from colonnade.governance.policy.sources import SHIPPED_POLICIES
from colonnade.governance.principal import Principal, PrincipalKind
from colonnade.governance.tool_access import ToolAccess
from tests.support.hold_contract import hold_contract

RESERVE = "acme:holds:reserve"
FROZEN_ITEMS = """package colonnade.policy

import rego.v1

deny contains "item I-9 is frozen" if {
	input.tool.operation == "reserve"
	input.arguments.item_id == "I-9"
}
"""


def _person(id: str, persona: Persona, tenant: str = "acme") -> Principal:
    return Principal(
        PrincipalKind.USER, id, tenant=tenant, persona=persona.value, scopes=PERSONA_SCOPES[persona]
    )


def _authority(subscribers: set[str], policy: PolicyGate | None = None) -> ResumeAuthority:
    catalog = Catalog()
    catalog.publish(hold_contract("acme", "http://127.0.0.1:9"))
    access = ToolAccess(
        catalog, lambda key, tenant, api: key in subscribers and (tenant, api) == ("acme", "holds")
    )
    return ResumeAuthority(catalog, access, policy)


def _owner(principal: Principal) -> ParkedOwner:
    return ParkedOwner(principal.key, principal.tenant, RESERVE, "1.0.0", "call-1", "prepared")


async def _code(
    authority: ResumeAuthority, owner: ParkedOwner, principal: Principal, item: str = "I-1"
) -> str | None:
    refused = await authority.check(owner, principal, doing="commit", call_id="c", input={"item_id": item})
    return refused.error.code if refused is not None and refused.error is not None else None


async def test_only_the_owner_in_its_tenant_is_admitted() -> None:
    authority = _authority(set())
    alice = _person("alice", Persona.ADMIN)
    owner = _owner(alice)
    assert await _code(authority, owner, alice) is None
    assert await _code(authority, owner, _person("bob", Persona.ADMIN)) == "A-AUTH-RESUME-PRINCIPAL"
    assert await _code(authority, owner, _person("alice", Persona.ADMIN, "globex")) == "A-AUTH-RESUME-TENANT"
    assert await _code(authority, owner, Principal.system("two-phase")) is None


async def test_the_owner_must_still_be_allowed_to_call_the_tool() -> None:
    subscribers = {"user:erin"}
    authority = _authority(subscribers)
    erin = _person("erin", Persona.CONSUMER)
    owner = _owner(erin)
    assert await _code(authority, owner, erin) is None
    subscribers.clear()  # the subscription ended after the call was prepared
    assert await _code(authority, owner, erin) == "A-AUTH-SUBSCRIPTION-REQUIRED"
    moved = Principal(PrincipalKind.USER, "erin", tenant="acme", persona=None, scopes=frozenset())
    assert await _code(authority, owner, moved) == "A-AUTH-RESUME-TOOL"  # hidden from it now


async def test_a_policy_that_denies_the_parked_arguments_now_refuses_the_owner(tmp_path: Path) -> None:
    (tmp_path / "frozen.rego").write_text(FROZEN_ITEMS)
    gate = PolicyGate((SHIPPED_POLICIES, tmp_path), isolate=False)  # compiled in process: the fast tier
    assert gate.load()
    authority = _authority(set(), gate)
    alice = _person("alice", Persona.ADMIN)
    assert await _code(authority, _owner(alice), alice, "I-1") is None
    assert await _code(authority, _owner(alice), alice, "I-9") == "A-AUTH-POLICY-DENIED"


async def test_the_check_is_noted_for_the_audit_record_without_replacing_the_callers_decision() -> None:
    authority = _authority(set())
    alice = _person("alice", Persona.ADMIN)
    with taking_note() as note:
        await authority.check(
            _owner(alice), _person("bob", Persona.ADMIN), doing="discard", call_id=None, input={}
        )
    assert note.decision is None and note.tool is None
    assert note.resume is not None
    assert (note.resume["parked_call_id"], note.resume["doing"]) == ("call-1", "discard")
    assert "bob" in note.resume["refused"]
