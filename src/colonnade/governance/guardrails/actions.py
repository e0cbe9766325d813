"""Which action each finding kind takes for one tool: defaults, then colonnade.yaml rules, then the contract.

The layers are applied in that order, each one naming only the kinds it changes: the settings'
`arguments`/`results`, then every `guardrails.rules` entry whose `tools` glob matches the tool's
canonical name (later rules win), then the contract's `llm.guardrails`. A kind no layer names is
only audited. On a result `approve` acts as `block`: the call already ran, so nobody can approve it
before it does; an approval is asked for on arguments only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase

from colonnade.catalog.tool import Tool
from colonnade.config import GuardrailSettings

__all__ = ["ToolGuardrails", "actions_for"]


@dataclass(frozen=True, slots=True)
class ToolGuardrails:
    """The actions for one tool, by kind: only kinds whose action is not `audit` or `off` are kept."""

    arguments: Mapping[str, str]
    results: Mapping[str, str]
    muted: frozenset[str]
    """Kinds switched off for this tool: not even audited."""


def actions_for(settings: GuardrailSettings, tool: Tool) -> ToolGuardrails:
    arguments: dict[str, str] = {}
    results: dict[str, str] = {}
    layers = [(settings.arguments, settings.results)]
    layers += [(r.arguments, r.results) for r in settings.rules if fnmatchcase(tool.canonical_name, r.tools)]
    contract = tool.llm.guardrails if tool.llm is not None else None
    if contract is not None:
        layers.append((contract.arguments, contract.results))
    for on_arguments, on_results in layers:
        arguments.update({str(kind): str(action) for kind, action in on_arguments.items()})
        results.update({str(kind): str(action) for kind, action in on_results.items()})
    muted = frozenset(k for k, a in arguments.items() if a == "off") & frozenset(
        k for k, a in results.items() if a == "off"
    )
    return ToolGuardrails(
        arguments={k: a for k, a in arguments.items() if a not in ("audit", "off")},
        results={
            k: "block" if a == "approve" else a for k, a in results.items() if a not in ("audit", "off")
        },
        muted=muted,
    )


def _on_result(action: str) -> str:
    return "block" if action == "approve" else action
