"""The policy engine and gate on real regopy: shipped policies, user policies, versions, broken
sets (kept out, old set serving), sets that crash the Rego engine (caught in a child process)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest

from colonnade.catalog.catalog import Catalog
from colonnade.governance.policy.decision import PolicyDecision
from colonnade.governance.policy.engine import CompiledPolicy, PolicyError
from colonnade.governance.policy.gate import PolicyGate, PolicyUnavailable
from colonnade.governance.policy.input_document import policy_input, time_document
from colonnade.governance.policy.sources import SHIPPED_POLICIES, PolicySet
from colonnade.governance.principal import Principal, PrincipalKind

AGENT = Principal(PrincipalKind.AGENT, "invoice-bot", tenant="acme", persona="agent")
USER = Principal(PrincipalKind.USER, "alice", tenant="acme", persona="developer")

DENY_BIG_REFUNDS = """package colonnade.policy

import rego.v1

deny contains "refunds above 1000 need a ticket" if {
	input.tool.operation == "refund_invoice"
	input.arguments.amount > 1000
}

redact_output_fields contains "customer.email" if input.tool.operation == "get_invoice"
"""

ATTEST_AGENT_WRITES = """package colonnade.policy

import rego.v1

require_attestation contains "agents attest their writes" if {
	input.principal.kind == "agent"
	input.tool.side_effects == "write"
}
"""

# rego-cpp 1.5 aborts the process building a bundle from this (whole-input `with` over a built-in).
CRASHES_REGO = """package colonnade.policy

import rego.v1

late contains m if {
	input.h < 9
	m := sprintf("%s", [input.tool.name])
}

probe if { count(late) == 1 with input as {"h": 1} }
"""


def _write(directory: Path, **files: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (directory / f"{name}.rego").write_text(text)
    return directory


def _decide(
    policy: CompiledPolicy, catalog: Catalog, tool: str, principal: Principal = USER, **args: object
) -> PolicyDecision:
    found = catalog.get(tool)
    assert found is not None
    return policy.evaluate(policy_input(principal, found, args))


def test_shipped_policies_ask_approval_for_destructive_tools_only(catalog: Catalog) -> None:
    policy = CompiledPolicy(PolicySet.read([SHIPPED_POLICIES]))
    void = _decide(policy, catalog, "acme:billing:void_invoice", invoice_id="inv_1")
    assert void.allowed and void.require_approval == (
        "acme:billing:void_invoice is destructive: a human must approve each call",
        "the contract of acme:billing:void_invoice asks for a human's approval",
    )
    obligations = void.obligations()
    assert obligations.require_approval and obligations.policy_version == policy.version
    assert obligations.reasons == void.require_approval
    listing = _decide(policy, catalog, "acme:billing:list_invoices")
    assert listing.allowed and not listing.obligations().require_approval


def test_user_policies_deny_with_reasons_and_name_fields_to_redact(
    tmp_path: Path,
    catalog: Catalog,
) -> None:
    mine = _write(tmp_path / "mine", refunds=DENY_BIG_REFUNDS, attest=ATTEST_AGENT_WRITES)
    policy = CompiledPolicy(PolicySet.read([SHIPPED_POLICIES, mine]))
    big = _decide(policy, catalog, "acme:billing:refund_invoice", invoice_id="i", amount=5000)
    assert not big.allowed and big.deny == ("refunds above 1000 need a ticket",)
    small = _decide(policy, catalog, "acme:billing:refund_invoice", invoice_id="i", amount=10)
    assert small.allowed and small.require_approval  # still destructive
    assert _decide(policy, catalog, "acme:billing:get_invoice").redact_output_fields == ("customer.email",)
    write = _decide(policy, catalog, "acme:billing:create_invoice", AGENT)
    assert write.obligations().require_attestation and not write.obligations().require_approval
    assert not _decide(policy, catalog, "acme:billing:create_invoice", USER).require_attestation


def test_the_version_is_a_digest_of_the_policy_files_not_of_their_tests(tmp_path: Path) -> None:
    mine = _write(tmp_path / "v", refunds=DENY_BIG_REFUNDS)
    first = PolicySet.read([mine]).version
    (mine / "refunds_test.rego").write_text("package t\n\nimport rego.v1\n\ntest_x if true\n")
    assert PolicySet.read([mine]).version == first
    _write(mine, refunds=DENY_BIG_REFUNDS.replace("1000", "2000"))
    assert PolicySet.read([mine]).version != first
    assert first.startswith("sha256:") and len(first) == len("sha256:") + 16


def test_a_policy_that_does_not_compile_is_named(tmp_path: Path) -> None:
    broken = _write(tmp_path / "b", broken="package colonnade.policy\n\ndeny contains x if {\n")
    with pytest.raises(PolicyError, match=r"broken\.rego: does not compile"):
        CompiledPolicy(PolicySet.read([broken]))


def test_a_set_that_cannot_decide_is_refused_when_it_loads(tmp_path: Path) -> None:
    text = "package colonnade.policy\n\nimport rego.v1\n\ndeny contains 7 if true\n"
    numbers = _write(tmp_path / "n", numbers=text)
    with pytest.raises(PolicyError, match="deny must hold strings"):
        CompiledPolicy(PolicySet.read([numbers]))


@pytest.mark.integration  # the gate compiles a new set in a child process first
def test_a_bad_new_set_keeps_the_old_one_serving(tmp_path: Path, catalog: Catalog) -> None:
    mine = _write(tmp_path / "g", refunds=DENY_BIG_REFUNDS)
    gate = PolicyGate((SHIPPED_POLICIES, mine))
    assert gate.load() and gate.problem is None
    served = gate.version
    _write(mine, broken="package colonnade.policy\n\ndeny contains x if {\n")
    assert gate.changed()
    assert not gate.load()
    assert gate.version == served and gate.status()["serving"] is True
    assert "broken.rego: does not compile" in str(gate.problem)
    tool = catalog.get("acme:billing:refund_invoice")
    assert tool is not None
    assert not gate.decide(USER, tool, {"invoice_id": "i", "amount": 5000}).allowed  # the old set decides
    (mine / "broken.rego").unlink()
    assert gate.load() and gate.problem is None and gate.version == served


@pytest.mark.integration  # the gate compiles a new set in a child process first
def test_a_set_that_crashes_the_rego_engine_is_caught_in_a_child_process(tmp_path: Path) -> None:
    mine = _write(tmp_path / "c", ok=DENY_BIG_REFUNDS)
    gate = PolicyGate((mine,))
    assert gate.load()
    _write(mine, crash=CRASHES_REGO)
    assert not asyncio.run(gate.reload())
    assert gate.problem == "the Rego engine crashed (SIGABRT) compiling or evaluating the policy set"
    assert gate.status()["serving"] is True  # and this process is still alive to say so


def test_with_no_set_loaded_every_decision_is_unavailable(tmp_path: Path, catalog: Catalog) -> None:
    gate = PolicyGate((tmp_path / "missing",))
    assert not gate.load()
    tool = catalog.get("acme:billing:list_invoices")
    assert tool is not None
    with pytest.raises(PolicyUnavailable, match="no such policy directory"):
        gate.decide(USER, tool, {})
    assert gate.status() | {"problem_at": None} == {
        "version": None,
        "loaded_at": None,
        "files": [],
        "directories": [str(tmp_path / "missing")],
        "problem": f"{tmp_path / 'missing'}: no such policy directory (check policy.directories)",
        "problem_at": None,
        "serving": False,
    }


def test_time_is_given_in_utc_and_in_the_tenants_zone() -> None:
    moment = datetime(2026, 11, 29, 20, 30, tzinfo=UTC)  # a Sunday
    paris = time_document(moment, "Europe/Paris")
    assert paris["utc"] == "2026-11-29T20:30:00Z" and paris["time_zone"] == "Europe/Paris"
    assert paris["local"] | {"iso": None} == {
        "iso": None,
        "hour": 21,
        "minute": 30,
        "weekday": "Sunday",
        "day_of_week": 7,
    }
    assert time_document(moment, None)["local"]["hour"] == 20


def test_the_weekday_is_the_tenants_and_in_english_every_day() -> None:
    # 2026-01-05 is a Monday; 23:30 UTC is already the next day in Tokyo, still that day in UTC.
    names = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
    for offset, name in enumerate(names):
        moment = datetime(2026, 1, 5 + offset, 23, 30, tzinfo=UTC)
        assert time_document(moment, None)["local"]["weekday"] == name
        tokyo = time_document(moment, "Asia/Tokyo")["local"]
        assert tokyo["weekday"] == names[(offset + 1) % 7]
        assert tokyo["day_of_week"] == (offset + 1) % 7 + 1
