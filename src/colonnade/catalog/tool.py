"""`Tool`: the one internal record of anything an agent can call, whatever its source.

Everything after the catalog (surfaces, pipeline, router, audit) reads tools only through this
record, so it carries both what clients see (wire name, schemas, annotations, `_meta`) and what
the gateway needs to govern and execute a call (side effects, determinism, adapter binding).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from typing import Any

from mcp import types as mcp_types
from pydantic import BaseModel

from colonnade.catalog.bindings import Binding
from colonnade.catalog.naming import split_canonical
from colonnade.contracts.model import Deprecation, Determinism, LlmBlock, RuntimeSpec, SideEffects

__all__ = [
    "META_BUILTIN",
    "META_CANONICAL_NAME",
    "META_CONTRACT_VERSION",
    "META_DEPRECATION",
    "META_DETERMINISM",
    "META_DIGEST",
    "META_REQUIRES_HUMAN_APPROVAL",
    "META_SAFE_FOR_AGENTS",
    "META_SIDE_EFFECTS",
    "Annotations",
    "Determinism",
    "Tool",
]

META_CANONICAL_NAME = "colonnade/canonical_name"
META_SIDE_EFFECTS = "colonnade/side_effects"
META_SAFE_FOR_AGENTS = "colonnade/safe_for_agents"
META_REQUIRES_HUMAN_APPROVAL = "colonnade/requires_human_approval"
META_CONTRACT_VERSION = "colonnade/contract_version"
META_DETERMINISM = "colonnade/determinism"
META_DIGEST = "colonnade/digest"
META_BUILTIN = "colonnade/meta_tool"
META_DEPRECATION = "colonnade/deprecation"
# Lifecycle state, not definition: a version deprecated after it was pinned keeps its digest.
_NOT_DIGESTED = frozenset({"digest", "deprecation", "llm_ready_failing", "flow_labels"})


@dataclass(frozen=True, slots=True)
class Annotations:
    """Behaviour hints shown to clients (MCP `ToolAnnotations`)."""

    read_only: bool
    destructive: bool
    idempotent: bool
    open_world: bool
    title: str | None = None

    def to_mcp(self) -> mcp_types.ToolAnnotations:
        return mcp_types.ToolAnnotations(
            title=self.title,
            read_only_hint=self.read_only,
            destructive_hint=self.destructive,
            idempotent_hint=self.idempotent,
            open_world_hint=self.open_world,
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class Tool:
    """A callable tool; immutable, and its schemas must be treated as read-only.

    `digest` is computed from every other field, so two records with the same digest define the
    same tool; the catalog uses it to tell an updated tool from an unchanged one.
    """

    canonical_name: str
    wire_name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None = None
    """The contract's schema of a result: what the pipeline validates outputs against."""
    mcp_output_schema: dict[str, Any] | None = None
    """What MCP clients are told (`contracts/output_shape.py`): an object root, non-object results
    wrapped as `{"result": ...}`; None when the result cannot be described as one object."""
    llm: LlmBlock | None = None
    side_effects: SideEffects
    determinism: Determinism
    annotations: Annotations
    safe_for_agents: bool
    requires_human_approval: bool
    version: str
    operation: str
    tags: tuple[str, ...] = ()
    source: str = "contract"
    adapter: str
    binding: Binding | None = None
    runtime: RuntimeSpec = field(default_factory=RuntimeSpec)
    owner: str | None = None
    environment: str | None = None
    """dev, staging or prod (the contract's); None when the source does not say (counts as prod)."""
    health_url: str | None = None
    deprecation: Deprecation | None = None
    """Set when the tool's version is deprecated (sunset, successor); outside the digest."""
    llm_ready_failing: tuple[str, ...] | None = None
    """The LLM-ready criteria (R1-R7) a contract's tool misses, `()` when it is LLM-ready; None for
    tools of other sources, which the criteria do not judge. Derived from the rest: outside the digest."""
    flow_labels: tuple[str, ...] = ()
    """reads_private, ingests_untrusted, egress: what the tool does with information (the contract's
    `llm.flow_labels` or the server override's); outside the digest, like an operator's approval flag."""
    digest: str = field(init=False, repr=False)

    def __post_init__(self) -> None:
        split_canonical(self.canonical_name)
        if not self.wire_name:
            raise ValueError(f"tool {self.canonical_name!r} has an empty wire name")
        if self.binding is not None and self.binding.kind != self.adapter:
            raise ValueError(
                f"tool {self.canonical_name!r} names adapter {self.adapter!r}"
                f" but has a {self.binding.kind} binding"
            )
        object.__setattr__(self, "digest", _digest_of(self))

    def __hash__(self) -> int:
        return hash((self.canonical_name, self.digest))

    @property
    def tenant(self) -> str:
        return split_canonical(self.canonical_name)[0]

    @property
    def api(self) -> str:
        return split_canonical(self.canonical_name)[1]

    @property
    def builtin(self) -> bool:
        """Answered by the gateway itself (a meta tool), not by a backend."""
        return self.adapter == "builtin"

    @property
    def summary(self) -> str:
        """One line on what the tool does: the contract's summary, else the description's first line."""
        if self.llm is not None:
            return self.llm.summary
        return self.description.strip().splitlines()[0] if self.description.strip() else self.title

    def meta(self) -> dict[str, Any]:
        """Typed facts for `_meta`, so clients and smoke tests need not parse prose."""
        if self.builtin:
            return {
                META_BUILTIN: True,
                META_CANONICAL_NAME: self.canonical_name,
                META_SIDE_EFFECTS: self.side_effects.value,
            }
        return {
            META_CANONICAL_NAME: self.canonical_name,
            META_SIDE_EFFECTS: self.side_effects.value,
            META_DETERMINISM: self.determinism.value,
            META_SAFE_FOR_AGENTS: self.safe_for_agents,
            META_REQUIRES_HUMAN_APPROVAL: self.requires_human_approval,
            META_CONTRACT_VERSION: self.version,
            META_DIGEST: self.digest,
            **self._deprecation_meta(),
        }

    def _deprecation_meta(self) -> dict[str, Any]:
        if self.deprecation is None:
            return {}
        return {META_DEPRECATION: self.deprecation.model_dump(mode="json", exclude_none=True)}

    def to_mcp(self) -> mcp_types.Tool:
        """The MCP wire form (`tools/list` entry)."""
        return mcp_types.Tool(
            name=self.wire_name,
            title=self.title,
            description=self.description,
            input_schema=self.input_schema,
            output_schema=self.mcp_output_schema,
            annotations=self.annotations.to_mcp(),
            _meta=self.meta(),
        )


def _digest_of(tool: Tool) -> str:
    definition = {f.name: getattr(tool, f.name) for f in fields(tool) if f.name not in _NOT_DIGESTED}
    text = json.dumps(
        definition, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_jsonable
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _jsonable(value: object) -> object:
    """JSON form of the non-JSON values a tool holds (models, dataclasses, tuples stay lists)."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    raise TypeError(f"cannot put {type(value).__name__} into a tool digest")
