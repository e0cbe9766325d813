"""The persona x tool matrix of `ToolAccess`, cell by cell: who sees and who calls which tool.

Tenant `acme` serves `items` (team-a, prod), `lab` (team-a, dev) and `other` (team-b, prod);
tenant `globex` serves `items` (team-a, prod). Each API has a read, a write, a destructive tool
and a read not safe for agents. Expected cells: `allow`, `hidden` (answered like an unknown
tool), or the refusal code of a tool the caller sees but may not call.
"""

from __future__ import annotations

import pytest

from colonnade.catalog.catalog import Catalog
from colonnade.governance.authorization import permits
from colonnade.governance.personas import PERSONA_SCOPES, Persona
from colonnade.governance.principal import Principal, PrincipalKind
from colonnade.governance.tool_access import ToolAccess
from tests.support.tenant_contracts import tenant_contract

FORBIDDEN = "A-AUTH-FORBIDDEN"
UNSUBSCRIBED = "A-AUTH-SUBSCRIPTION-REQUIRED"
APIS = {
    "acme:items": ("team-a", "prod"),
    "acme:lab": ("team-a", "dev"),
    "acme:other": ("team-b", "prod"),
    "globex:items": ("team-a", "prod"),
}


def _principal(persona: Persona, name: str | None = None, **fields: object) -> Principal:
    kind = PrincipalKind.AGENT if persona is Persona.AGENT else PrincipalKind.USER
    values: dict[str, object] = {"tenant": "acme", "scopes": PERSONA_SCOPES[persona], **fields}
    return Principal(kind, name or f"{persona.value}-1", persona=persona.value, **values)  # type: ignore[arg-type]


PRINCIPALS = {
    "admin": _principal(Persona.ADMIN),
    "product_owner": _principal(Persona.PRODUCT_OWNER, team="team-a"),
    "developer": _principal(Persona.DEVELOPER, team="team-a"),
    "consumer": _principal(Persona.CONSUMER),
    "subscriber": _principal(Persona.CONSUMER, "subscriber-1"),
    "security": _principal(Persona.SECURITY),
    "agent": _principal(Persona.AGENT, allowed_tools=("acme:items:*", "acme:lab:audit_item")),
}

# persona -> api -> (read_item, write_item, drop_item, audit_item)
A, H = "allow", "hidden"
MATRIX: dict[str, dict[str, tuple[str, str, str, str]]] = {
    "admin": {"acme:items": (A, A, A, A), "acme:lab": (A, A, A, A), "acme:other": (A, A, A, A)},
    "product_owner": {"acme:items": (A, A, A, A), "acme:lab": (A, A, A, A), "acme:other": (H, H, H, H)},
    "developer": {
        "acme:items": (A, FORBIDDEN, FORBIDDEN, A),
        "acme:lab": (A, A, A, A),
        "acme:other": (H, H, H, H),
    },
    "consumer": {
        "acme:items": (UNSUBSCRIBED,) * 4,  # type: ignore[dict-item]
        "acme:lab": (UNSUBSCRIBED,) * 4,  # type: ignore[dict-item]
        "acme:other": (UNSUBSCRIBED,) * 4,  # type: ignore[dict-item]
    },
    "subscriber": {
        "acme:items": (A, A, A, A),
        "acme:lab": (UNSUBSCRIBED,) * 4,  # type: ignore[dict-item]
        "acme:other": (UNSUBSCRIBED,) * 4,  # type: ignore[dict-item]
    },
    "security": {
        "acme:items": (A, FORBIDDEN, FORBIDDEN, A),
        "acme:lab": (A, FORBIDDEN, FORBIDDEN, A),
        "acme:other": (A, FORBIDDEN, FORBIDDEN, A),
    },
    "agent": {"acme:items": (A, A, H, H), "acme:lab": (H, H, H, A), "acme:other": (H, H, H, H)},
}
TOOLS = ("read_item", "write_item", "drop_item", "audit_item")
CELLS = [
    (who, api, tool, expected)
    for who, row in MATRIX.items()
    for api, cells in {**row, "globex:items": (H, H, H, H)}.items()
    for tool, expected in zip(TOOLS, cells, strict=True)
]


@pytest.fixture(scope="module")
def access() -> ToolAccess:
    catalog = Catalog()
    for api, (owner, environment) in APIS.items():
        tenant, name = api.split(":")
        catalog.publish(
            tenant_contract(tenant, name, "http://127.0.0.1:9", owner=owner, environment=environment)
        )
    principals = {p.key: p for p in PRINCIPALS.values()}
    subscribed = {("user:subscriber-1", "acme", "items")}
    assert set(principals) >= {key for key, _, _ in subscribed}
    return ToolAccess(catalog, lambda who, tenant, api: (who, tenant, api) in subscribed)


@pytest.mark.parametrize(
    ("who", "api", "tool", "expected"), CELLS, ids=[f"{c[0]}-{c[1]}:{c[2]}" for c in CELLS]
)
def test_matrix_cell(access: ToolAccess, who: str, api: str, tool: str, expected: str) -> None:
    principal = PRINCIPALS[who]
    found = access.catalog.get(f"{api}:{tool}")
    assert found is not None
    decision = access.decide(principal, found)
    seen = permits(access.visible(principal), found.canonical_name)
    if expected == A:
        assert decision.allowed and decision.visible and seen, decision
    elif expected == H:
        assert not decision.allowed and not decision.visible and not seen, decision
    else:
        assert not decision.allowed and decision.visible and seen, decision
        assert decision.code == expected, decision
    assert decision.reasons  # every decision says why, for the audit record


def test_a_principal_without_a_tenant_sees_every_tenant_only_as_admin(access: ToolAccess) -> None:
    platform = Principal(PrincipalKind.USER, "root", persona="admin", scopes=PERSONA_SCOPES[Persona.ADMIN])
    stray = Principal(
        PrincipalKind.USER, "nobody", persona="consumer", scopes=PERSONA_SCOPES[Persona.CONSUMER]
    )
    globex = access.catalog.get("globex:items:read_item")
    assert globex is not None
    assert access.decide(platform, globex).allowed
    assert not access.decide(stray, globex).visible


def test_scopes_narrow_what_a_persona_may_do(access: ToolAccess) -> None:
    tool = access.catalog.get("acme:items:write_item")
    assert tool is not None
    reader = _principal(Persona.ADMIN, scopes=frozenset({"colonnade:catalog:read"}))
    assert access.decide(reader, tool).code == FORBIDDEN
    blind = _principal(Persona.ADMIN, scopes=frozenset())
    assert not access.decide(blind, tool).visible


def test_anonymous_callers_and_unknown_personas_see_nothing(access: ToolAccess) -> None:
    tool = access.catalog.get("acme:items:read_item")
    assert tool is not None
    anonymous = Principal(
        PrincipalKind.ANONYMOUS, "loopback", tenant="acme", scopes=PERSONA_SCOPES[Persona.ADMIN]
    )
    stranger = Principal(
        PrincipalKind.USER,
        "x",
        tenant="acme",
        persona="auditor",
        scopes=frozenset({"colonnade:catalog:read"}),
    )
    assert not access.decide(anonymous, tool).visible
    assert not access.decide(stranger, tool).visible


def test_an_undeclared_environment_counts_as_production_for_developers() -> None:
    catalog = Catalog()
    catalog.publish(tenant_contract("acme", "legacy", "http://127.0.0.1:9", environment=None))
    tool = catalog.get("acme:legacy:write_item")
    assert tool is not None and tool.environment is None
    decision = ToolAccess(catalog).decide(PRINCIPALS["developer"], tool)
    assert decision.code == FORBIDDEN and "prod" in decision.reasons[0]
