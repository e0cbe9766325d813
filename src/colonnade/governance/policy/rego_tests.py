"""Run a policy set's own Rego tests: every `test_*` rule of its `*_test.rego` files.

A test passes when its rule is true, fails when it is false or undefined, and errs when the
engine cannot evaluate it (regopy gives no message then; the usual cause is a `with input as`
that replaces the whole input of a rule calling a built-in, which rego-cpp does not support).
Each test file is evaluated with the policies in an interpreter of its own, because such a
construct spoils every query of the interpreter that holds it: one bad file errs alone.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from regopy import RegoError

from colonnade.governance.policy.engine import PolicyError, interpreter_with
from colonnade.governance.policy.sources import PolicyFile, PolicySet

__all__ = ["RegoTestOutcome", "RegoTestResult", "run_rego_tests"]

_PACKAGE = re.compile(r"^package\s+([A-Za-z_][\w.]*)", re.MULTILINE)
_TEST_RULE = re.compile(r"^(test_\w+)\b", re.MULTILINE)


class RegoTestOutcome(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"


@dataclass(frozen=True, slots=True)
class RegoTestResult:
    file: str
    name: str
    outcome: RegoTestOutcome


def run_rego_tests(policy_set: PolicySet, settings: Mapping[str, Any] | None = None) -> list[RegoTestResult]:
    """Every test of the set, in file order; raises PolicyError when a file does not compile."""
    results = []
    for file in policy_set.tests:
        package = _package(file)
        rego = interpreter_with((*policy_set.policies, file), settings or {})
        for name in dict.fromkeys(_TEST_RULE.findall(file.text)):
            results.append(
                RegoTestResult(str(file.path), name, _outcome(rego.query(f"data.{package}.{name}")))
            )
    return results


def _package(file: PolicyFile) -> str:
    found = _PACKAGE.search(file.text)
    if found is None:
        raise PolicyError(f"{file.path}: no package line")
    return found.group(1)


def _outcome(output: Any) -> RegoTestOutcome:
    try:
        if not output.ok():
            return RegoTestOutcome.ERROR
    except RegoError:
        return RegoTestOutcome.ERROR
    results = output.results
    passed = bool(results) and bool(results[0].expressions) and results[0].expressions[0] is True
    return RegoTestOutcome.PASS if passed else RegoTestOutcome.FAIL
