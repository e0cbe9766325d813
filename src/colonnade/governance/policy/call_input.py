"""The input of one call's decision, written for rego-cpp with its unchanging part recorded once.

The principal's and the tool's parts of the input document are the same for every call a
principal makes to a tool, so their ops are recorded the first time and replayed after; only the
arguments and the time are written per call. The document is the one `policy_input` builds (same
keys, same values): `colonnade policy eval` and the gateway decide on the same input.

A recording is keyed by the principal (an equal principal gives an equal document) and by the
tool object itself (a reloaded catalog gives new tool objects, whose recordings start afresh).
The cache lives with one compiled policy set, so a reload starts it empty, and it is bounded.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from colonnade.catalog.tool import Tool
from colonnade.governance.policy.input_document import (
    context_document,
    principal_document,
    time_document,
    tool_document,
)
from colonnade.governance.policy.native import MEMBER_END, Op, object_end, ops_of
from colonnade.governance.principal import Principal

__all__ = ["CallInputs"]

_MAX_RECORDINGS = 4096
_ARGUMENTS_KEY, _TIME_KEY = ops_of("arguments")[0], ops_of("time")[0]
_DOCUMENT_END = object_end(6)
"""principal, tool, arguments, time, guardrails, flow."""


@dataclass(frozen=True, slots=True)
class _Recording:
    tool: Tool
    ops: tuple[Op, ...]


@dataclass(slots=True)
class CallInputs:
    """Writes the input document of a call; `time_zones` maps a tenant to its IANA time zone."""

    time_zones: Mapping[str, str] = field(default_factory=dict)
    _recordings: dict[tuple[Principal, int], _Recording] = field(default_factory=dict)

    def ops(
        self,
        principal: Principal,
        tool: Tool,
        arguments: Mapping[str, Any],
        now: datetime | None = None,
        context: Mapping[str, Any] | None = None,
    ) -> list[Op]:
        """The ops that build `policy_input(principal, tool, arguments, now=now, context=context, ...)`.

        Raises ValueError when the arguments hold what rego-cpp cannot take (see `ops_of`).
        """
        ops = [*self._static(principal, tool), _ARGUMENTS_KEY]
        ops_of(arguments, ops)
        ops.append(MEMBER_END)
        ops.append(_TIME_KEY)
        ops_of(time_document(now or datetime.now(UTC), self.time_zones.get(tool.tenant)), ops)
        ops.append(MEMBER_END)
        for key, value in context_document(context).items():
            ops.append(ops_of(key)[0])
            ops_of(value, ops)
            ops.append(MEMBER_END)
        ops.append(_DOCUMENT_END)
        return ops

    def _static(self, principal: Principal, tool: Tool) -> tuple[Op, ...]:
        key = (principal, id(tool))
        try:
            found = self._recordings.get(key)
        except TypeError:  # a principal holding a list where a tuple belongs: not recorded
            return tuple(_unclosed(principal, tool))
        if found is not None and found.tool is tool:
            return found.ops
        recorded = tuple(_unclosed(principal, tool))
        if len(self._recordings) >= _MAX_RECORDINGS:
            self._recordings.clear()
        self._recordings[key] = _Recording(tool, recorded)
        return recorded

    def __len__(self) -> int:
        return len(self._recordings)


def _unclosed(principal: Principal, tool: Tool) -> list[Op]:
    """The principal's and tool's members of the document, the object not closed yet."""
    ops = ops_of({"principal": principal_document(principal), "tool": tool_document(tool)})
    return ops[:-1]
