"""A policy set compiled once into a regopy bundle, evaluated for each call.

regopy compiles the set into a bundle with one entrypoint (the decision); each call then writes
its input document straight into rego-cpp and queries that entrypoint, through the GIL-holding
calls of `native` (see there why). Measured by `bench/policy_eval.py`: an interpreted query costs
about ten times as much, and a bundle fed JSON text about twice. The interpreter is reused across
calls; it is not thread-safe, so one engine serves one event loop.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from regopy import Bundle, Interpreter, RegoError

from colonnade.governance.policy.decision import PolicyDecision
from colonnade.governance.policy.framing import (
    DECISION_ENTRYPOINT,
    DECISION_MODULE,
    DECISION_MODULE_NAME,
    DECISION_QUERY,
    OBLIGATION_RULES,
)
from colonnade.governance.policy.native import NativeError, Op, ops_of, query_with_input
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
    # Not `add_data`: its JSON escapes non-ASCII text, which rego-cpp then keeps escaped, so that
    # `data.colonnade.settings` would not equal the same text written in a policy or an input.
    rego.add_data_json(json.dumps({"colonnade": {"settings": dict(settings)}}, ensure_ascii=False))
    return rego


class CompiledPolicy:
    """One policy set, compiled; `evaluate` answers a decision for one input document."""

    def __init__(self, policy_set: PolicySet, settings: Mapping[str, Any] | None = None) -> None:
        self.policy_set = policy_set
        self.version = policy_set.version
        self._rego = interpreter_with(policy_set.policies, settings or {})
        try:
            bundle: Bundle = self._rego.build(None, [DECISION_ENTRYPOINT])
        except RegoError as exc:
            raise PolicyError(f"the policy set does not compile: {_first_line(exc)}") from None
        if not bundle.ok():
            raise PolicyError("the policy set does not compile into a bundle")
        self._bundle = bundle
        self.evaluate(SAMPLE_INPUT)

    def evaluate(self, document: Mapping[str, Any]) -> PolicyDecision:
        """The decision for one input document (as `policy_input` builds it)."""
        try:
            ops = ops_of(document)
        except ValueError as exc:
            raise PolicyError(f"the input cannot be given to the policies: {exc}") from None
        return self.evaluate_ops(ops)

    def evaluate_ops(self, ops: Iterable[Op]) -> PolicyDecision:
        """The decision for the input document these ops write (see `CallInputs`)."""
        try:
            text = query_with_input(self._rego._impl, self._bundle._impl, _ENTRYPOINT, ops)
        except (NativeError, ctypes.ArgumentError, TypeError, ValueError) as exc:
            raise PolicyError(f"the policies could not be evaluated: {_first_line(exc)}") from None
        # An erroneous output gives no text (reading it crashes regopy 1.5): only its `ok` is asked.
        expression = _first_expression(text)
        if expression is None:
            raise PolicyError(
                "the policies could not be evaluated for this call (a rule raised an error or two "
                "complete rules gave different values); run `colonnade policy eval` to see which input"
            )
        return _decision(expression, self.version)


_ENTRYPOINT = DECISION_ENTRYPOINT.encode()


def _first_expression(text: str | None) -> Any:
    """The value of the entrypoint in an output's JSON text; None when there is none."""
    if text is None or text == "undefined":
        return None
    try:
        output = json.loads(text)
    except json.JSONDecodeError:
        return None
    result = output[0] if isinstance(output, list) and output else output
    expressions = result.get("expressions") if isinstance(result, dict) else None
    return expressions[0] if isinstance(expressions, list) and expressions else None


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
