"""Cards -> catalog tools: every organ function becomes a Tool named `{tenant}:{organ}:{op}`.

The card's side effects map onto the contract vocabulary (the strongest wins: delete is
destructive, write is write, read or network is read, none is pure), `idempotent` onto the call
contract's determinism (so retries and idempotency treat an organ like any backend), the queue
cap onto the tool's concurrency limit and the SLO onto its manifest. A destructive function needs
a human's approval like any destructive tool.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable

from colonnade.catalog.bindings import OrganBinding
from colonnade.catalog.naming import WireProfile, join_canonical, to_wire
from colonnade.catalog.projection import humanize
from colonnade.catalog.tool import Annotations, Tool
from colonnade.contracts.model import Determinism, RuntimeSpec, SideEffects
from colonnade.contracts.output_shape import mcp_output_schema
from colonnade.organs.card import FunctionCard, OrganCard

__all__ = ["determinism_of", "organ_tools", "side_effects_of", "strongest"]

_LEVEL = {
    "read": SideEffects.READ,
    "network": SideEffects.READ,
    "write": SideEffects.WRITE,
    "delete": SideEffects.DESTRUCTIVE,
}
_ORDER = (SideEffects.NONE, SideEffects.READ, SideEffects.WRITE, SideEffects.DESTRUCTIVE)


def strongest(levels: Iterable[SideEffects]) -> SideEffects:
    return max(levels, key=_ORDER.index, default=SideEffects.NONE)


def side_effects_of(function: FunctionCard) -> SideEffects:
    return strongest(_LEVEL[effect] for effect in function.side_effects)


def determinism_of(function: FunctionCard) -> Determinism:
    if not function.idempotent:
        return Determinism.SIDE_EFFECTFUL
    return Determinism.PURE if not function.side_effects else Determinism.IDEMPOTENT


def organ_tools(card: OrganCard, *, tenant: str, profile: WireProfile = "strict") -> list[Tool]:
    """One tool per operation of the card (sub-organs' included), in card order."""
    return [_tool(card, op, function, tenant, profile) for op, function in card.operations().items()]


def _tool(card: OrganCard, op: str, function: FunctionCard, tenant: str, profile: WireProfile) -> Tool:
    canonical = join_canonical(tenant, card.name, op)
    effects = side_effects_of(function)
    title = humanize(op.replace(".", "_"))
    reads = effects in (SideEffects.NONE, SideEffects.READ)
    destructive = effects is SideEffects.DESTRUCTIVE
    network = "network" in function.side_effects
    return Tool(
        canonical_name=canonical,
        wire_name=to_wire(canonical, profile),
        title=title,
        description=function.description,
        input_schema=copy.deepcopy(function.input_schema),
        output_schema=copy.deepcopy(function.output_schema),
        mcp_output_schema=mcp_output_schema(function.output_schema),
        side_effects=effects,
        determinism=determinism_of(function),
        annotations=Annotations(
            read_only=reads,
            destructive=destructive,
            idempotent=function.idempotent,
            open_world=network,
            title=title,
        ),
        safe_for_agents=not destructive,
        requires_human_approval=destructive,
        version=card.version,
        operation=op,
        tags=tuple(function.tags),
        source="organ",
        adapter="organ",
        binding=OrganBinding(
            organ=card.name,
            op=op,
            network=network,
            p95_latency_ms=function.slo.p95_latency_ms,
            max_error_rate=function.slo.max_error_rate,
        ),
        runtime=RuntimeSpec(concurrency_max=function.slo.queue_cap),
        owner=card.author,
    )
