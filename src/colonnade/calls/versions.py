"""Version pinning: a call's `tool_version` (exact or range) resolves to exactly one published version."""

from __future__ import annotations

from dataclasses import dataclass

from colonnade.calls.call_errors import error
from colonnade.calls.envelope import CallError, CallStatus
from colonnade.catalog.catalog import Catalog
from colonnade.catalog.tool import Tool
from colonnade.contracts.semver import parse_range, parse_semver

__all__ = ["Refusal", "resolve_tool", "unknown_tool"]


@dataclass(frozen=True, slots=True)
class Refusal:
    status: CallStatus
    error: CallError


def resolve_tool(catalog: Catalog, name: str, version_spec: str | None) -> Tool | Refusal:
    """The served tool when no version is asked; else the highest version matching within one major."""
    if version_spec is None:
        tool = catalog.get(name)
        return tool if tool is not None else unknown_tool(name)
    versions = catalog.tool_versions(name)
    if not versions:
        return unknown_tool(name)
    try:
        wanted = parse_range(version_spec)
    except ValueError as exc:
        return Refusal(*error("I-REQ-ENVELOPE", f"tool_version: {exc}", field="tool_version"))
    matching = sorted((v for v in versions if wanted.matches(v)), key=parse_semver)
    if not matching:
        available = sorted(versions, key=parse_semver)
        return Refusal(
            *error(
                "C-CONTRACT-VERSION-MISMATCH",
                f"no version of '{name}' satisfies {version_spec!r}; published: {', '.join(available)}",
                available=available,
            )
        )
    majors = sorted({parse_semver(v).major for v in matching})
    if len(majors) > 1:
        return Refusal(
            *error(
                "C-CONTRACT-AMBIGUOUS-VERSION",
                f"{version_spec!r} matches major versions {majors} of '{name}'; pin one major version",
                matching=matching,
            )
        )
    return versions[matching[-1]]


def unknown_tool(name: str) -> Refusal:
    return Refusal(*error("I-REQ-UNKNOWN-TOOL", f"no tool named '{name}'", tool_id=name))
