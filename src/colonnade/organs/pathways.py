"""Pathways: organ functions run in a row, declared in YAML and served as one tool.

    pathways:
      - name: keep_and_find_similar
        description: Store a note, then find the notes most like it.
        tags: [notes, search]
        steps:
          - op: vault.store
          - op: vault.similarity.search
            map: {query: $input/content}

Each step is `organ.op`. Without `map` a step's input is the previous step's output (the
pathway's input for the first step); with `map` each argument is taken from a JSON pointer into
the previous output (`/key`) or into the pathway's input (`$input/content`). A pathway tool is as
strong as its strongest step: its side effects, determinism and approval follow from its steps.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from colonnade.catalog.bindings import PathwayBinding
from colonnade.catalog.naming import WireProfile, join_canonical, to_wire
from colonnade.catalog.projection import humanize
from colonnade.catalog.tool import Annotations, Tool
from colonnade.contracts.model import Determinism, SideEffects
from colonnade.organs.card import FUNCTION_NAME, TAG, FunctionCard
from colonnade.organs.loading import OrganHost
from colonnade.organs.organ_errors import PathwayError
from colonnade.organs.projection import determinism_of, side_effects_of, strongest

__all__ = [
    "INPUT_PREFIX",
    "PATHWAY_API",
    "Pathway",
    "PathwayStep",
    "load_pathways",
    "pathway_tool",
    "resolve_step",
    "step_list",
]

PATHWAY_API = "pathway"
INPUT_PREFIX = "$input"
_DETERMINISM = (Determinism.PURE, Determinism.IDEMPOTENT, Determinism.SIDE_EFFECTFUL)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PathwayStep(_Model):
    op: str = Field(pattern=r"^[a-z][a-z0-9-]*\.[a-z][a-z0-9_.]*$", description="organ.op, e.g. vault.store")
    map: dict[str, str] | None = Field(
        default=None, description="argument -> `/pointer` into the previous output or `$input/pointer`."
    )

    @property
    def organ(self) -> str:
        return self.op.split(".", 1)[0]

    @property
    def function(self) -> str:
        return self.op.split(".", 1)[1]


class Pathway(_Model):
    name: str = Field(pattern=FUNCTION_NAME)
    description: str = Field(min_length=1)
    tags: list[str] = Field(default_factory=list)
    input_schema: dict[str, Any] | None = Field(default=None, description="Default: the first step's.")
    steps: list[PathwayStep] = Field(min_length=1)


class _PathwayFile(_Model):
    pathways: list[Pathway]


def resolve_step(host: OrganHost, step: PathwayStep) -> FunctionCard | None:
    card = host.card(step.organ)
    return card.operations().get(step.function) if card is not None else None


def load_pathways(paths: Iterable[Path], host: OrganHost) -> list[Pathway]:
    """Every pathway of the files, checked against the served organs; PathwayError lists every problem."""
    found: list[Pathway] = []
    problems: list[str] = []
    for path in paths:
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
            document = _PathwayFile.model_validate(data)
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            problems.append(f"{path}: cannot read the pathways: {exc}")
            continue
        except ValidationError as exc:
            problems.extend(f"{path}: {'/'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
            continue
        for index, pathway in enumerate(document.pathways):
            where = f"{path}: pathways/{index} ({pathway.name})"
            problems.extend(f"{where}: {problem}" for problem in _problems(pathway, host))
            found.append(pathway)
    names = [p.name for p in found]
    problems.extend(
        f"pathway name {n!r} is used twice" for n in sorted({n for n in names if names.count(n) > 1})
    )
    if problems:
        raise PathwayError("invalid pathways:\n" + "\n".join(f"  {p}" for p in problems))
    return found


def _problems(pathway: Pathway, host: OrganHost) -> Iterable[str]:
    for tag in pathway.tags:
        if not re.match(TAG, tag):
            yield f"tag {tag!r} is not lowercase and hyphenated"
    for index, step in enumerate(pathway.steps):
        if resolve_step(host, step) is None:
            card = host.card(step.organ)
            known = (
                ", ".join(card.operations())
                if card is not None
                else f"no organ named '{step.organ}' is served"
            )
            yield f"steps/{index}: {step.op} is not an operation of a served organ ({known})"
        for argument, source in (step.map or {}).items():
            pointer = source.removeprefix(INPUT_PREFIX)
            if pointer and not pointer.startswith("/"):
                yield (
                    f"steps/{index}/map/{argument}: {source!r} is not '/pointer' nor '{INPUT_PREFIX}/pointer'"
                )


def pathway_tool(pathway: Pathway, host: OrganHost, *, tenant: str, profile: WireProfile = "strict") -> Tool:
    """The pathway as one tool: as strong as its strongest step, approval-gated if any step is."""
    functions = [resolve_step(host, step) for step in pathway.steps]
    steps = [f for f in functions if f is not None]
    if len(steps) != len(functions):
        raise PathwayError(f"pathway '{pathway.name}' names operations no served organ has")
    effects = strongest(side_effects_of(f) for f in steps)
    determinism = max((determinism_of(f) for f in steps), key=_DETERMINISM.index)
    destructive = effects is SideEffects.DESTRUCTIVE
    network = any("network" in f.side_effects for f in steps)
    canonical = join_canonical(tenant, PATHWAY_API, pathway.name)
    title = humanize(pathway.name)
    idempotent = determinism is not Determinism.SIDE_EFFECTFUL
    output_schema = _output_schema(steps[-1].output_schema)
    return Tool(
        canonical_name=canonical,
        wire_name=to_wire(canonical, profile),
        title=title,
        description=f"{pathway.description}\nSteps: {' -> '.join(s.op for s in pathway.steps)}",
        input_schema=copy.deepcopy(pathway.input_schema or steps[0].input_schema),
        output_schema=output_schema,
        mcp_output_schema=output_schema,
        side_effects=effects,
        determinism=determinism,
        annotations=Annotations(
            read_only=effects in (SideEffects.NONE, SideEffects.READ),
            destructive=destructive,
            idempotent=idempotent,
            open_world=network,
            title=title,
        ),
        safe_for_agents=not destructive,
        requires_human_approval=destructive,
        version="1.0.0",
        operation=pathway.name,
        tags=tuple(pathway.tags),
        source="pathway",
        adapter="pathway",
        binding=PathwayBinding(name=pathway.name, steps=tuple(s.op for s in pathway.steps), network=network),
    )


def _output_schema(last: dict[str, Any] | None) -> dict[str, Any]:
    step = {
        "type": "object",
        "properties": {
            "index": {"type": "integer"},
            "op": {"type": "string"},
            "ok": {"type": "boolean"},
            "latency_ms": {"type": "number"},
            "cost": {"type": "number"},
        },
        "required": ["index", "op", "ok", "latency_ms", "cost"],
    }
    output: dict[str, Any] = copy.deepcopy(last) if last is not None else {}
    defs = output.pop("$defs", None)
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "output": output,
            "steps": {"type": "array", "items": step},
            "latency_ms": {"type": "number"},
            "cost": {"type": "number"},
        },
        "required": ["output", "steps", "latency_ms", "cost"],
    }
    if defs is not None:  # the last step's definitions stay reachable at the root (#/$defs/...)
        schema["$defs"] = defs
    return schema


def step_list(steps: Sequence[PathwayStep | str | dict[str, Any]]) -> list[PathwayStep]:
    """Steps as given to the executive: `organ.op` strings, dicts or models."""
    return [
        s if isinstance(s, PathwayStep) else PathwayStep(op=s) if isinstance(s, str) else PathwayStep(**s)
        for s in steps
    ]
