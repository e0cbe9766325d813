"""The input a decision reads, written natively with the per-(principal, tool) part recorded once:
the policies see exactly `policy_input`'s document (strings with quotes, backslashes or NULs
included), a recording never serves another principal, tool or reload, and what rego-cpp cannot
take is refused (fail-closed)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from colonnade.catalog.catalog import Catalog
from colonnade.catalog.tool import Tool
from colonnade.governance.policy.call_input import CallInputs
from colonnade.governance.policy.engine import CompiledPolicy, PolicyError
from colonnade.governance.policy.gate import PolicyGate, PolicyUnavailable
from colonnade.governance.policy.input_document import policy_input
from colonnade.governance.policy.native import ops_of
from colonnade.governance.policy.sources import PolicySet
from colonnade.governance.principal import Principal, PrincipalKind

AGENT = Principal(
    PrincipalKind.AGENT, "invoice-bot", tenant="acme", persona="agent", scopes=frozenset({"b", "a"})
)
USER = Principal(PrincipalKind.USER, "alice", tenant="acme", persona="developer")

# The input the policy reads, against the document given as data (JSON text, another road in).
COMPARE_INPUT = """package colonnade.policy

import rego.v1

deny contains "the input differs" if object.remove(input, ["time"]) != data.colonnade.settings.expected

deny contains "the time differs" if not input.time.time_zone == "Europe/Paris"

deny contains "the time differs" if not is_number(input.time.unix)

deny contains "the time differs" if {
	not object.keys(input.time.local) == {"iso", "hour", "minute", "weekday", "day_of_week"}
}
"""

DENY_BY_WHO_WHAT_AND_ARGUMENTS = """package colonnade.policy

import rego.v1

deny contains "no agents on refunds" if {
	input.principal.kind == "agent"
	input.tool.operation == "refund_invoice"
}

deny contains "refunds above 1000 need a ticket" if {
	input.tool.operation == "refund_invoice"
	input.arguments.amount > 1000
}

deny contains "tagged" if "blocked" in input.tool.tags
"""

# Two complete rules that disagree for one input only: the set loads, that call cannot be decided.
CONFLICT_ON_ONE_INPUT = """package colonnade.policy

import rego.v1

level := "low" if input.arguments.amount == 1

level := "high" if input.arguments.amount == 1

deny contains level if level == "never"
"""

ARGUMENTS: dict[str, Any] = {
    "text": 'héllo \u2603 "quoted" \\ back \\b',
    "quoted": '"admin"',
    "control": "tab\t nl\n nul\0 end",
    "int": -(2**63),
    "big": 2**63 - 1,
    "float": 2.5,
    "none": None,
    "false": False,
    "true": True,
    "list": [1, "two", [3.5, {"four": None}], []],
    "empty": {},
}


def _gate(tmp_path: Path, data: dict[str, Any] | None = None, **files: str) -> PolicyGate:
    directory = tmp_path / "policies"
    directory.mkdir(exist_ok=True)
    for name, text in files.items():
        (directory / f"{name}.rego").write_text(text)
    gate = PolicyGate((directory,), data or {}, time_zones={"acme": "Europe/Paris"}, isolate=False)
    assert gate.load(), gate.problem
    return gate


def _tool(catalog: Catalog, name: str) -> Tool:
    found = catalog.get(name)
    assert found is not None
    return found


def test_the_policies_read_exactly_the_documented_input(tmp_path: Path, catalog: Catalog) -> None:
    tool = _tool(catalog, "acme:billing:refund_invoice")
    expected = policy_input(AGENT, tool, ARGUMENTS)
    del expected["time"]
    gate = _gate(tmp_path, {"expected": expected}, compare=COMPARE_INPUT)
    for _ in range(3):  # the first call records the principal's and tool's part, the others replay it
        assert gate.decide(AGENT, tool, ARGUMENTS).allowed
    assert gate.decide(AGENT, tool, ARGUMENTS | {"int": 1}).deny == ("the input differs",)
    assert gate.decide(USER, tool, ARGUMENTS).deny == ("the input differs",)


STRINGS_AS_WRITTEN = """package colonnade.policy

import rego.v1

deny contains "quoted admin" if input.arguments.who == "\\"admin\\""

deny contains "bare admin" if input.arguments.who == "admin"

deny contains "backslash" if input.arguments.path == "a\\\\b"

deny contains "cut at NUL" if input.arguments.path == "/public"
"""


@pytest.mark.parametrize(
    ("arguments", "deny"),
    [
        ({"who": '"admin"'}, ("quoted admin",)),
        ({"who": "admin"}, ("bare admin",)),
        ({"path": "a\\b"}, ("backslash",)),
        ({"path": "/public\0/../secret"}, ()),
    ],
)
def test_strings_reach_the_policies_as_the_caller_wrote_them(
    tmp_path: Path, catalog: Catalog, arguments: dict[str, Any], deny: tuple[str, ...]
) -> None:
    gate = _gate(tmp_path, strings=STRINGS_AS_WRITTEN)
    assert gate.decide(USER, _tool(catalog, "acme:billing:get_invoice"), arguments).deny == deny


def test_the_recorded_ops_are_those_of_the_whole_document(catalog: Catalog) -> None:
    inputs = CallInputs({"acme": "Europe/Paris"})
    tool = _tool(catalog, "acme:crm:get_customer")
    moment = datetime(2026, 11, 29, 20, 30, tzinfo=UTC)
    document = policy_input(USER, tool, {"id": "C-1"}, now=moment, time_zones={"acme": "Europe/Paris"})
    assert inputs.ops(USER, tool, {"id": "C-1"}, moment) == ops_of(document)
    assert inputs.ops(USER, tool, {"id": "C-2"}, moment) == ops_of(document | {"arguments": {"id": "C-2"}})
    assert len(inputs) == 1


def test_a_recording_never_serves_another_principal_tool_or_arguments(
    tmp_path: Path, catalog: Catalog
) -> None:
    gate = _gate(tmp_path, rules=DENY_BY_WHO_WHAT_AND_ARGUMENTS)
    refund, get = _tool(catalog, "acme:billing:refund_invoice"), _tool(catalog, "acme:billing:get_invoice")
    small, big = {"invoice_id": "i", "amount": 10}, {"invoice_id": "i", "amount": 5000}
    for _ in range(2):  # the second round is served from the recordings of the first
        assert gate.decide(AGENT, refund, small).deny == ("no agents on refunds",)
        assert gate.decide(USER, refund, small).allowed
        assert gate.decide(USER, refund, big).deny == ("refunds above 1000 need a ticket",)
        assert gate.decide(AGENT, get, small).allowed
    # A principal equal in id but not in what it is gets its own recording.
    renamed = dataclasses.replace(AGENT, kind=PrincipalKind.USER)
    assert gate.decide(renamed, refund, small).allowed
    # A tool republished under the same name (a catalog reload) is a new tool object.
    tagged = dataclasses.replace(refund, tags=(*refund.tags, "blocked"))
    assert "tagged" in gate.decide(USER, tagged, small).deny
    assert "tagged" not in gate.decide(USER, refund, small).deny


def test_a_reload_starts_with_no_recordings(tmp_path: Path, catalog: Catalog) -> None:
    gate = _gate(tmp_path, rules=DENY_BY_WHO_WHAT_AND_ARGUMENTS)
    refund = _tool(catalog, "acme:billing:refund_invoice")
    assert not gate.decide(AGENT, refund, {"amount": 1}).allowed
    loaded = gate._loaded
    assert loaded is not None and len(loaded.inputs) == 1
    (tmp_path / "policies" / "rules.rego").write_text(DENY_BY_WHO_WHAT_AND_ARGUMENTS.replace("agent", "user"))
    assert gate.load()
    reloaded = gate._loaded
    assert reloaded is not None and reloaded is not loaded and len(reloaded.inputs) == 0
    assert gate.decide(AGENT, refund, {"amount": 1}).allowed  # the new rules, not a kept answer


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({"amount": 2**63}, "does not fit in 64 bits"),
        ({"amount": -(2**63) - 1}, "does not fit in 64 bits"),
        ({"when": datetime(2026, 1, 1)}, "a datetime cannot be given"),
        ({"text": "\ud800"}, "surrogate"),
    ],
)
def test_arguments_rego_cannot_take_make_the_decision_unavailable(
    tmp_path: Path, catalog: Catalog, arguments: dict[str, Any], problem: str
) -> None:
    gate = _gate(tmp_path, rules=DENY_BY_WHO_WHAT_AND_ARGUMENTS)
    with pytest.raises(PolicyUnavailable, match=problem):
        gate.decide(USER, _tool(catalog, "acme:billing:get_invoice"), arguments)
    policy = CompiledPolicy(PolicySet.read([tmp_path / "policies"]))
    with pytest.raises(PolicyError, match=problem):
        policy.evaluate({"arguments": arguments})


def test_a_rule_that_errs_for_one_call_makes_only_that_call_unavailable(
    tmp_path: Path, catalog: Catalog
) -> None:
    gate = _gate(tmp_path, conflict=CONFLICT_ON_ONE_INPUT)
    tool = _tool(catalog, "acme:billing:refund_invoice")
    with pytest.raises(PolicyUnavailable, match="could not be evaluated for this call"):
        gate.decide(USER, tool, {"amount": 1})
    assert gate.decide(USER, tool, {"amount": 2}).allowed


ECHO_IN_REASONS = """package colonnade.policy

import rego.v1

deny contains sprintf("bad %s", [input.arguments.x]) if input.arguments.x

deny contains input.arguments.y if input.arguments.y
"""


@pytest.mark.parametrize("text", ['a"b\\c', "tab\there", "héllo ☃", "nul\0x"])
def test_a_reason_built_from_a_callers_string_comes_back_as_the_caller_wrote_it(
    tmp_path: Path, catalog: Catalog, text: str
) -> None:
    gate = _gate(tmp_path, echo=ECHO_IN_REASONS)
    tool = _tool(catalog, "acme:billing:get_invoice")
    assert gate.decide(USER, tool, {"x": text}).deny == (f"bad {text}",)
    assert gate.decide(USER, tool, {"y": text}).deny == (text,)


def test_a_principal_that_cannot_be_hashed_is_decided_without_a_recording(
    tmp_path: Path, catalog: Catalog
) -> None:
    gate = _gate(tmp_path, rules=DENY_BY_WHO_WHAT_AND_ARGUMENTS)
    listed = dataclasses.replace(AGENT, allowed_tools=["acme:*"])  # type: ignore[arg-type]
    refund = _tool(catalog, "acme:billing:refund_invoice")
    assert gate.decide(listed, refund, {"amount": 1}).deny == ("no agents on refunds",)
    loaded = gate._loaded
    assert loaded is not None and len(loaded.inputs) == 0


class _Text(str):
    pass


class _Number(int):
    pass


def test_builtin_values_and_their_lookalikes_are_written_alike() -> None:
    # Exact built-in types take a shorter road than their subclasses and other mappings: both
    # must write the same calls, and refuse the same integers (an int subclass was once checked
    # against the 64-bit range by walking it: 2**64 steps).
    plain = {"a": [1, True, None, 'x"y', {"b": 2.5, "c": False}], "n": -(2**63), "s": {"k"}}
    lookalike = MappingProxyType(
        {
            _Text("a"): (_Number(1), True, None, _Text('x"y'), MappingProxyType({"b": 2.5, "c": False})),
            "n": _Number(-(2**63)),
            "s": frozenset({"k"}),
        }
    )
    assert ops_of(plain) == ops_of(lookalike)
    assert ops_of(True) != ops_of(1) and ops_of(False) != ops_of(0)
    for too_big in (2**63, _Number(2**63)):
        with pytest.raises(ValueError, match="does not fit in 64 bits"):
            ops_of({"n": too_big})
