"""The Rego test runner (pass, fail, error) and output redaction by dotted path."""

from __future__ import annotations

from pathlib import Path

from colonnade.governance.policy.output_redaction import REDACTED, redact_paths
from colonnade.governance.policy.rego_tests import RegoTestOutcome, run_rego_tests
from colonnade.governance.policy.sources import SHIPPED_POLICIES, PolicySet

POLICY = """package colonnade.policy

import rego.v1

deny contains sprintf("no %s", [input.tool.name]) if input.tool.side_effects in {"destructive", "write"}
"""

TESTS = """package colonnade.mine_test

import rego.v1

test_destructive_is_denied if {
	tool := {"name": "a:b:c", "side_effects": "destructive"}
	data.colonnade.decision.deny == {"no a:b:c"} with input.tool as tool
}

test_a_wrong_expectation if {
	tool := {"name": "a:b:c", "side_effects": "none"}
	count(data.colonnade.decision.deny) == 1 with input.tool as tool
}
"""

WHOLE_INPUT = """package colonnade.whole_test

import rego.v1

test_whole_input_replacement if {
	count(data.colonnade.decision.deny) == 1 with input as {"tool": {"name": "a", "side_effects": "write"}}
}
"""


def test_each_test_rule_passes_fails_or_errs(tmp_path: Path) -> None:
    (tmp_path / "mine.rego").write_text(POLICY)
    (tmp_path / "mine_test.rego").write_text(TESTS)
    (tmp_path / "whole_test.rego").write_text(WHOLE_INPUT)
    results = {result.name: result.outcome for result in run_rego_tests(PolicySet.read([tmp_path]))}
    assert results == {
        "test_destructive_is_denied": RegoTestOutcome.PASS,
        "test_a_wrong_expectation": RegoTestOutcome.FAIL,
        "test_whole_input_replacement": RegoTestOutcome.ERROR,  # rego-cpp 1.5 cannot; documented
    }


def test_the_shipped_policies_and_the_example_pass_their_own_tests() -> None:
    for directory in (SHIPPED_POLICIES, SHIPPED_POLICIES / "examples"):
        results = run_rego_tests(PolicySet.read([directory]))
        assert results and all(result.outcome is RegoTestOutcome.PASS for result in results), results


def test_redaction_follows_dotted_paths_through_lists_and_wildcards() -> None:
    output = {
        "id": "inv_1",
        "customer": {"email": "a@example.com", "name": "Ada"},
        "lines": [{"sku": "x", "price": 3}, {"sku": "y", "price": 4}],
        "meta": {"a": {"secret": 1}, "b": {"secret": 2, "kept": True}},
    }
    redacted = redact_paths(output, ["customer.email", "lines.price", "meta.*.secret", "nowhere.at.all"])
    assert redacted == {
        "id": "inv_1",
        "customer": {"email": REDACTED, "name": "Ada"},
        "lines": [{"sku": "x", "price": REDACTED}, {"sku": "y", "price": REDACTED}],
        "meta": {"a": {"secret": REDACTED}, "b": {"secret": REDACTED, "kept": True}},
    }
    assert output["customer"]["email"] == "a@example.com"  # the original is untouched
    assert redact_paths([1, 2], ["a"]) == [1, 2] and redact_paths("text", ["a"]) == "text"
