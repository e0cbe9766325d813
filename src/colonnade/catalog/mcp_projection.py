"""A downstream MCP server's tools -> `Tool` records named `{tenant}:{server}:{tool}`.

What the server declares passes through (description, input and output schemas, annotations);
what the operator configured wins (`servers[].tools.<name>`: description, side effects, approval).
Side effects not configured follow the annotations: `destructiveHint` is destructive,
`readOnlyHint` is read, anything else is a write. `allow_tools`/`deny_tools` (globs) decide which
tools are served at all.
"""

from __future__ import annotations

import copy
import difflib
import fnmatch
from collections.abc import Iterable

import mcp_types as types

from colonnade.catalog.bindings import McpBinding
from colonnade.catalog.naming import WireProfile, join_canonical, to_wire
from colonnade.catalog.tool import Annotations, Determinism, Tool
from colonnade.config import McpServerSettings, ToolOverride
from colonnade.contracts.model import RuntimeSpec, SideEffects
from colonnade.contracts.semver import parse_semver

__all__ = [
    "UNVERSIONED",
    "project_server_tools",
    "served",
    "side_effects_of",
    "source_id",
    "unmatched_settings",
]

UNVERSIONED = "0.0.0"


def source_id(server: str) -> str:
    """The catalog source a server's tools are served under."""
    return f"mcp:{server}"


def served(server: McpServerSettings, tool_name: str) -> bool:
    """Whether the operator lets this tool through: on the allow-list (when there is one), not denied."""
    if any(fnmatch.fnmatchcase(tool_name, pattern) for pattern in server.deny_tools):
        return False
    allow = server.allow_tools
    return allow is None or any(fnmatch.fnmatchcase(tool_name, pattern) for pattern in allow)


def unmatched_settings(server: McpServerSettings, tool_names: Iterable[str]) -> list[str]:
    """The settings that name no tool of the server, one line each: a typo there would otherwise
    leave a risky tool ungated (`tools.<name>`), unserved (`allow_tools`) or served (`deny_tools`)."""
    names = list(tool_names)
    problems = [
        f"tools.{name} names no tool of the server{_guess(name, names)}"
        for name in server.tools
        if name not in names
    ]
    for key, patterns in (("allow_tools", server.allow_tools or []), ("deny_tools", server.deny_tools)):
        problems.extend(
            f"{key}: {pattern!r} matches no tool of the server{_guess(pattern, names)}"
            for pattern in patterns
            if not any(fnmatch.fnmatchcase(name, pattern) for name in names)
        )
    return problems


def _guess(name: str, names: list[str]) -> str:
    near = difflib.get_close_matches(name, names, n=1)
    if near:
        return f"; did you mean {near[0]!r}?"
    shown = ", ".join(names[:10]) + (", ..." if len(names) > 10 else "")
    return f" (its tools: {shown})"


def side_effects_of(annotations: types.ToolAnnotations | None, override: ToolOverride | None) -> SideEffects:
    if override is not None and override.side_effects is not None:
        return SideEffects(override.side_effects)
    if annotations is not None and annotations.destructive_hint is True:
        return SideEffects.DESTRUCTIVE
    if annotations is not None and annotations.read_only_hint is True:
        return SideEffects.READ
    return SideEffects.WRITE


def project_server_tools(
    server: McpServerSettings,
    tools: Iterable[types.Tool],
    *,
    profile: WireProfile = "strict",
    version: str | None = None,
) -> list[Tool]:
    """The served tools of one server, in the server's order."""
    semver = _semver(version)
    return [
        project_tool(server, tool, profile=profile, version=semver)
        for tool in tools
        if served(server, tool.name)
    ]


def project_tool(server: McpServerSettings, tool: types.Tool, *, profile: WireProfile, version: str) -> Tool:
    override = server.tools.get(tool.name)
    hints = tool.annotations
    side_effects = side_effects_of(hints, override)
    reads = side_effects in (SideEffects.NONE, SideEffects.READ)
    idempotent = reads or bool(hints is not None and hints.idempotent_hint)
    title = (hints.title if hints is not None else None) or tool.title or tool.name
    canonical = join_canonical(server.tenant, server.name, tool.name)
    timeout_ms = round(server.call_timeout_s * 1000)
    approval = override.requires_human_approval if override is not None else None
    return Tool(
        canonical_name=canonical,
        wire_name=to_wire(canonical, profile),
        title=title,
        description=(override.description if override is not None else None)
        or tool.description
        or f"{tool.name} (tool of the MCP server {server.name})",
        input_schema=copy.deepcopy(tool.input_schema),
        output_schema=copy.deepcopy(tool.output_schema),
        side_effects=side_effects,
        determinism=Determinism.IDEMPOTENT if idempotent else Determinism.SIDE_EFFECTFUL,
        annotations=Annotations(
            read_only=reads,
            destructive=side_effects is SideEffects.DESTRUCTIVE,
            idempotent=idempotent,
            open_world=hints.open_world_hint is not False if hints is not None else True,
            title=title,
        ),
        safe_for_agents=reads,
        requires_human_approval=approval if approval is not None else side_effects is SideEffects.DESTRUCTIVE,
        version=version,
        operation=tool.name,
        tags=("mcp", server.name),
        source="mcp",
        adapter="mcp",
        binding=McpBinding(
            server=server.name,
            tool=tool.name,
            transport=server.transport,
            url=server.url,
            timeout_ms=timeout_ms,
        ),
        runtime=RuntimeSpec(timeout_ms_default=timeout_ms),
        flow_labels=tuple(override.flow_labels) if override is not None else (),
    )


def _semver(version: str | None) -> str:
    """The server's version when it is a semantic version, else `UNVERSIONED`."""
    if not version:
        return UNVERSIONED
    try:
        parse_semver(version)
    except ValueError:
        return UNVERSIONED
    return version
