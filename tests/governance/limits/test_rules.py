"""Which calls a rule applies to, and which count each falls under."""

from __future__ import annotations

from colonnade.config import LimitRuleSettings
from colonnade.governance.limits import LimitRule
from colonnade.governance.principal import Principal, PrincipalKind

BOT = Principal(PrincipalKind.AGENT, "bot", tenant="acme", persona="agent")
ALICE = Principal(PrincipalKind.USER, "alice", tenant="beta", persona="developer")
OPERATOR = Principal(PrincipalKind.USER, "root", persona="admin")


def _rule(**fields: object) -> LimitRule:
    return LimitRule.from_settings(LimitRuleSettings.model_validate({"name": "r", "requests": 5, **fields}))


def _keys(rule: LimitRule, principal: Principal, tool: str = "acme:billing:pay") -> list[str]:
    return [bound.key for bound in rule.bind(principal, tool)]


def test_per_names_what_gets_its_own_count() -> None:
    assert _keys(_rule(), BOT) == _keys(_rule(), ALICE) == ["w|r"], "no `per`: one count for all"
    assert _keys(_rule(per="principal"), BOT) == ["w|r|agent:bot"]
    assert _keys(_rule(per=["tenant", "api"]), ALICE) == ["w|r|beta|acme:billing"]
    assert _keys(_rule(per="tool"), BOT) == ["w|r|acme:billing:pay"]
    assert _keys(_rule(per="tenant"), OPERATOR) == ["w|r|acme"], "no tenant of its own: the tool's"


def test_per_agent_leaves_other_callers_out() -> None:
    assert _keys(_rule(per="agent"), BOT) == ["w|r|bot"]
    assert _keys(_rule(per="agent"), ALICE) == []


def test_globs_choose_the_tools_callers_and_tenants() -> None:
    rule = _rule(tools=["acme:billing:*"], principals=["agent:*"], tenants=["acme"])
    assert _keys(rule, BOT) == ["w|r"]
    assert _keys(rule, BOT, "acme:crm:get") == []
    assert _keys(rule, ALICE) == []
    assert _keys(_rule(principals=["user:alice", "user:bob"]), ALICE) == ["w|r"]


def test_a_rule_with_requests_and_concurrency_binds_two_counts() -> None:
    bound = _rule(concurrency=2, window_s=0.5).bind(BOT, "acme:billing:pay")
    assert [(b.kind, b.limit, b.window_ms) for b in bound] == [("requests", 5, 500), ("concurrency", 2, 0)]
