"""The executive: what the served organs can do, found by meaning, checked, sent and composed.

It lists and searches functions (search goes through the router's index, the same retrieval that
answers `search_tools`), hands out cards, checks a stimulus against its function's input schema
before sending it, and runs pathways: steps in order, each output feeding the next, stopping at
the first failure and saying which step failed. Organs are imported on first use, as the gateway
does; `Executive.standalone(host)` builds its own index for use outside a gateway.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import jsonschema_rs
from pydantic import BaseModel, ConfigDict

from colonnade.catalog.catalog import Catalog
from colonnade.catalog.naming import join_canonical
from colonnade.organs.card import FunctionCard, OrganCard
from colonnade.organs.dispatch import send
from colonnade.organs.loading import OrganHost
from colonnade.organs.organ_errors import OrganLoadError
from colonnade.organs.pathways import INPUT_PREFIX, Pathway, PathwayStep, step_list
from colonnade.organs.projection import organ_tools, side_effects_of
from colonnade.organs.stimulus import (
    INVALID_INPUT,
    UNLOADABLE,
    UNSUPPORTED_OPERATION,
    OrganFailure,
    Response,
    Stimulus,
    StimulusContext,
)
from colonnade.routing.catalog_index import CatalogIndex
from colonnade.routing.corpus import ToolCorpus

__all__ = ["Executive", "FunctionMatch", "FunctionRef", "PathwayResult", "StepRecord", "Violation"]


@dataclass(frozen=True, slots=True)
class FunctionRef:
    """One operation of one organ, as the executive lists it."""

    organ: str
    op: str
    tool: str
    description: str
    tags: tuple[str, ...]
    side_effects: str
    idempotent: bool


@dataclass(frozen=True, slots=True)
class FunctionMatch:
    function: FunctionRef
    score: float
    matched_terms: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Violation:
    pointer: str
    message: str


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class StepRecord(_Model):
    index: int
    op: str
    ok: bool
    latency_ms: float
    cost: float


class PathwayResult(_Model):
    """A pathway's outcome: the last output, or the first failure and the index of its step."""

    ok: bool
    output: Any = None
    steps: list[StepRecord]
    failed_step: int | None = None
    error: OrganFailure | None = None
    latency_ms: float
    cost: float
    cpu_ms: float


class Executive:
    def __init__(self, host: OrganHost, *, tenant: str, corpus: ToolCorpus) -> None:
        self.host = host
        self.tenant = tenant
        self.corpus = corpus
        self.pathways: dict[str, Pathway] = {}
        self._refs: dict[str, FunctionRef] = {}
        self._schemas: dict[tuple[str, str], Any] = {}
        for card in host.cards:
            for op, function in card.operations().items():
                tool = join_canonical(tenant, card.name, op)
                self._refs[tool] = FunctionRef(
                    card.name,
                    op,
                    tool,
                    function.description,
                    tuple(function.tags),
                    side_effects_of(function).value,
                    function.idempotent,
                )

    @classmethod
    def standalone(cls, host: OrganHost, *, tenant: str = "local") -> Executive:
        """An executive with its own catalog and index of the host's organs (outside a gateway)."""
        catalog = Catalog()
        for card in host.cards:
            catalog.add_tools(f"organ:{card.name}", organ_tools(card, tenant=tenant))
        return cls(host, tenant=tenant, corpus=CatalogIndex(catalog).corpus)

    def add_pathways(self, pathways: Sequence[Pathway]) -> None:
        for pathway in pathways:
            self.pathways[pathway.name] = pathway

    # -- what the organs can do ----------------------------------------------------------------

    def list_functions(self) -> list[FunctionRef]:
        return list(self._refs.values())

    def functions_with_tag(self, tag: str) -> list[FunctionRef]:
        return [ref for ref in self._refs.values() if tag in ref.tags]

    def search_functions(self, query: str, k: int = 5) -> list[FunctionMatch]:
        """The functions that best fit a request in plain words, best first (the router's index)."""
        if not query.strip() or k < 1:
            return []
        hits = self.corpus.search(query, k, allowed=frozenset(self._refs))
        return [
            FunctionMatch(self._refs[h.id], round(h.score, 4), h.matched_terms)
            for h in hits
            if h.id in self._refs
        ]

    def get_organ_card(self, organ: str) -> OrganCard:
        card = self.host.card(organ)
        if card is None:
            raise KeyError(
                f"no organ named '{organ}' (served: {', '.join(c.name for c in self.host.cards) or 'none'})"
            )
        return card

    def function_card(self, organ: str, op: str) -> FunctionCard | None:
        card = self.host.card(organ)
        return card.operations().get(op) if card is not None else None

    # -- sending stimuli -------------------------------------------------------------------------

    def validate_stimulus(self, organ: str, op: str, input: Mapping[str, Any]) -> list[Violation]:
        """Every way `input` breaks the function's input schema ([] when it fits), before anything is sent."""
        function = self.function_card(organ, op)
        if function is None:
            return [Violation("", f"organ '{organ}' has no operation '{op}'")]
        validator = self._schemas.get((organ, op))
        if validator is None:
            validator = self._schemas[(organ, op)] = jsonschema_rs.validator_for(function.input_schema)
        found = [Violation(_pointer(e.instance_path), e.message) for e in validator.iter_errors(dict(input))]
        return sorted(found, key=lambda v: (v.pointer, v.message))

    async def stimulate_organ(
        self,
        organ: str,
        op: str,
        input: Mapping[str, Any],
        context: StimulusContext | None = None,
        *,
        timeout_s: float | None = None,
    ) -> Response:
        """Check the input, then send it; a bad input or an unknown op is answered without sending."""
        if self.function_card(organ, op) is None:
            card = self.host.card(organ)
            supported = list(card.operations()) if card is not None else []
            return Response.failure(
                UNSUPPORTED_OPERATION, f"organ '{organ}' has no operation '{op}'", op=op, supported=supported
            )
        violations = self.validate_stimulus(organ, op, input)
        if violations:
            summary = "; ".join(f"{v.pointer or '/'}: {v.message}" for v in violations[:5])
            return Response.failure(
                INVALID_INPUT,
                f"{len(violations)} input problem(s) for '{organ}.{op}': {summary}",
                violations=[{"pointer": v.pointer, "message": v.message} for v in violations],
            )
        try:
            target = await self.host.organ(organ)
        except OrganLoadError as exc:
            return Response.failure(UNLOADABLE, str(exc), organ=organ)
        given = context or StimulusContext()
        stimulus = Stimulus(
            op=op,
            input=dict(input),
            context=given.model_copy(update={"data_dir": self.host.folder_for(organ)}),
        )
        return await send(target, stimulus, timeout_s=timeout_s)

    # -- pathways --------------------------------------------------------------------------------

    async def pathway(
        self,
        steps: Sequence[PathwayStep | str | dict[str, Any]],
        input: Mapping[str, Any],
        context: StimulusContext | None = None,
        *,
        timeout_s: float | None = None,
    ) -> PathwayResult:
        """Run the steps in order; the first failure ends the pathway and is returned with its step index."""
        started = time.perf_counter()
        deadline = started + timeout_s if timeout_s is not None else None
        records: list[StepRecord] = []
        cost = cpu = 0.0
        previous: Any = dict(input)
        for index, step in enumerate(step_list(steps)):
            arguments, problem = _arguments(step, index, previous, input)
            if problem is not None:
                response = Response.failure(INVALID_INPUT, problem, step=index)
            else:
                left = max(0.0, deadline - time.perf_counter()) if deadline is not None else None
                response = await self.stimulate_organ(
                    step.organ, step.function, arguments, _step_context(context, index), timeout_s=left
                )
            records.append(
                StepRecord(
                    index=index,
                    op=step.op,
                    ok=response.ok,
                    latency_ms=response.latency_ms,
                    cost=response.cost,
                )
            )
            cost += response.cost
            cpu += response.cpu_ms or 0.0
            if not response.ok:
                return PathwayResult(
                    ok=False,
                    steps=records,
                    failed_step=index,
                    error=response.error,
                    latency_ms=_since(started),
                    cost=cost,
                    cpu_ms=round(cpu, 3),
                )
            previous = response.output
        return PathwayResult(
            ok=True,
            output=previous,
            steps=records,
            latency_ms=_since(started),
            cost=cost,
            cpu_ms=round(cpu, 3),
        )

    async def run_pathway(
        self,
        name: str,
        input: Mapping[str, Any],
        context: StimulusContext | None = None,
        *,
        timeout_s: float | None = None,
    ) -> PathwayResult:
        pathway = self.pathways.get(name)
        if pathway is None:
            failure = OrganFailure(code=UNSUPPORTED_OPERATION, message=f"no pathway named '{name}'")
            return PathwayResult(ok=False, steps=[], error=failure, latency_ms=0.0, cost=0.0, cpu_ms=0.0)
        return await self.pathway(pathway.steps, input, context, timeout_s=timeout_s)


def _arguments(
    step: PathwayStep, index: int, previous: Any, original: Mapping[str, Any]
) -> tuple[dict[str, Any], str | None]:
    """The step's input: the previous output as is, or assembled by the step's mapping."""
    if step.map is None:
        if isinstance(previous, dict):
            return previous, None
        return (
            {},
            f"step {index} ({step.op}) needs an object, but the previous output is {type(previous).__name__}",
        )
    arguments: dict[str, Any] = {}
    for argument, source in step.map.items():
        from_input = source.startswith(INPUT_PREFIX)
        root: Any = dict(original) if from_input else previous
        pointer = source.removeprefix(INPUT_PREFIX)
        found, value = _resolve(root, pointer)
        if not found:
            where = "the pathway's input" if from_input else "the previous output"
            return {}, f"step {index} ({step.op}): map.{argument}: {pointer or '/'} is not in {where}"
        arguments[argument] = value
    return arguments, None


def _resolve(document: Any, pointer: str) -> tuple[bool, Any]:
    node = document
    for raw in pointer.split("/")[1:] if pointer else []:
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return False, None
    return True, node


def _step_context(context: StimulusContext | None, index: int) -> StimulusContext:
    """Each step gets the pathway's context; a key becomes one key per step (the same on a retry)."""
    given = context or StimulusContext()
    if given.idempotency_key is None:
        return given
    return given.model_copy(update={"idempotency_key": f"{given.idempotency_key}#step{index}"})


def _pointer(parts: Any) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def _since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)
