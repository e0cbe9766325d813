"""A policy set compiled once into a regopy bundle, evaluated for each call.

Compiling into a bundle and querying it with an `Input` object built from the document is the
fastest way regopy offers (measured by `bench/policy_eval.py`: about 0.2 ms a decision, against
about 2 ms for an interpreted query and 0.5 ms for a bundle fed with JSON text). The interpreter
is reused across calls; it is not thread-safe, so one engine serves one event loop.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from regopy import Bundle, Input, Interpreter, RegoError

from colonnade.governance.policy.decision import PolicyDecision
from colonnade.governance.policy.framing import (
    DECISION_MODULE,
    DECISION_MODULE_NAME,
    DECISION_QUERY,
    OBLIGATION_RULES,
)
from colonnade.governance.policy.sources import PolicyFile, PolicySet

__all__ = ["SAMPLE_INPUT", "CompiledPolicy", "PolicyError", "interpreter_with"]

SAMPLE_INPUT: dict[str, Any] = {
    "principal": {"kind": "agent", "id": "probe", "tenant": "probe", "persona": "agent", "scopes": []},
    "tool": {"name": "probe:probe:probe", "tenant": "probe", "side_effects": "write", "tags": []},
    "arguments": {},
    "time": {"utc": "2026-01-05T10:00:00Z", "time_zone": "UTC", "local": {"hour": 10, "weekday": "Monday"}},
}
"""One call every new set decides at load: a set that compiles but cannot evaluate is refused then."""

_ERROR_ITEM = re.compile(r"\(error \d+:[^|]*\|(\d+)\|\d+\s*\(errormsg \d+:([^)]*)\)")


class PolicyError(Exception):
    """The policy set cannot be compiled or evaluated; the message says where and what."""


def interpreter_with(files: tuple[PolicyFile, ...], settings: Mapping[str, Any]) -> Interpreter:
    """An interpreter holding the gateway's decision module, the files and `data.colonnade.settings`."""
    rego = Interpreter()
    rego.add_module(DECISION_MODULE_NAME, DECISION_MODULE)
    for file in files:
        try:
            with _native_output_to_stderr():
                rego.add_module(file.module_name, file.text)
        except RegoError as exc:
            raise PolicyError(f"{file.path}: does not compile: {_compile_problem(exc, file.text)}") from None
    rego.add_data({"colonnade": {"settings": dict(settings)}})
    return rego


class CompiledPolicy:
    """One policy set, compiled; `evaluate` answers a decision for one input document."""

    def __init__(self, policy_set: PolicySet, settings: Mapping[str, Any] | None = None) -> None:
        self.policy_set = policy_set
        self.version = policy_set.version
        self._rego = interpreter_with(policy_set.policies, settings or {})
        try:
            bundle: Bundle = self._rego.build(DECISION_QUERY)
        except RegoError as exc:
            raise PolicyError(f"the policy set does not compile: {_first_line(exc)}") from None
        if not bundle.ok():
            raise PolicyError("the policy set does not compile into a bundle")
        self._bundle = bundle
        self.evaluate(SAMPLE_INPUT)

    def evaluate(self, document: Mapping[str, Any]) -> PolicyDecision:
        try:
            self._rego.set_input(Input(document))
            output = self._rego.query_bundle(self._bundle)
        except (RegoError, TypeError, ValueError) as exc:
            raise PolicyError(f"the policies could not be evaluated: {_first_line(exc)}") from None
        # Reading an erroneous output's text crashes regopy 1.5: only `ok()` is safe to ask.
        if not output.ok() or not output.results or not output.results[0].expressions:
            raise PolicyError(
                "the policies could not be evaluated for this call (a rule raised an error or two "
                "complete rules gave different values); run `colonnade policy eval` to see which input"
            )
        return _decision(output.results[0].expressions[0], self.version)


def _decision(value: Any, version: str) -> PolicyDecision:
    if not isinstance(value, dict):
        raise PolicyError(f"{DECISION_QUERY} is not an object")
    fields: dict[str, tuple[str, ...]] = {}
    for rule in OBLIGATION_RULES:
        items = value.get(rule, [])
        if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
            raise PolicyError(f"data.colonnade.policy.{rule} must hold strings only")
        fields[rule] = tuple(sorted(items))
    return PolicyDecision(version, **fields)


@contextmanager
def _native_output_to_stderr() -> Iterator[None]:
    """rego-cpp prints compile errors on the process's stdout, which may be an MCP stdio stream or
    a `--format json` report: send them to stderr while it compiles (the message is raised too)."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def _compile_problem(exc: RegoError, source: str) -> str:
    """rego-cpp's error sequence as `line N: message` items (its offsets are into the source)."""
    text = str(exc)
    found = [
        f"line {source[: int(offset)].count(chr(10)) + 1}: {message}"
        for offset, message in _ERROR_ITEM.findall(text)
    ]
    return "; ".join(dict.fromkeys(found)) or _first_line(exc)


def _first_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:300] or type(exc).__name__
