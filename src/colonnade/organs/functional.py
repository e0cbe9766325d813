"""`FunctionOrgan`: write an organ as plain typed functions; the card is derived, not hand-written.

    vault = FunctionOrgan("vault", version="1.0.0", description=..., division="storage", ...)

    @vault.function(tags=["blobs", "write"], examples=[...], side_effects=["write"], idempotent=True)
    def store(key: str, content: str) -> Stored:
        "Store a blob under a key."

The docstring describes the function, the type hints give its input and output schemas (pydantic),
and a parameter annotated `StimulusContext` receives the stimulus' context. Plain functions run
in a worker thread (they may block, e.g. on SQLite); coroutine functions run on the event loop.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import ValidationError

from colonnade.organs.card import (
    Effect,
    ExecutionMode,
    FunctionCard,
    FunctionExample,
    FunctionSlo,
    OrganCard,
    Residency,
)
from colonnade.organs.cpu import CpuMeter, thread_cpu_ms
from colonnade.organs.protocol import Organ
from colonnade.organs.schemas import FunctionSignature, signature_of
from colonnade.organs.stimulus import (
    INTERNAL,
    INVALID_INPUT,
    UNSUPPORTED_OPERATION,
    OrganError,
    Response,
    Stimulus,
    StimulusContext,
)

__all__ = ["FunctionOrgan", "unsupported"]

logger = logging.getLogger("colonnade.organs")

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True, slots=True)
class _Function:
    card: FunctionCard
    call: Callable[..., Any]
    signature: FunctionSignature
    cost: float


def unsupported(organ: str, op: str, supported: Sequence[str]) -> Response:
    """The answer to an operation the organ does not have: it names the op and what is supported."""
    return Response.failure(
        UNSUPPORTED_OPERATION,
        f"organ '{organ}' has no operation '{op}'; it answers: {', '.join(supported) or 'nothing'}",
        op=op,
        supported=list(supported),
    )


class FunctionOrgan:
    """An organ whose functions are registered with `@organ.function(...)`; parts with `add_sub_organ`."""

    def __init__(
        self,
        name: str,
        *,
        version: str,
        description: str,
        division: str,
        subsystem: str,
        tags: Sequence[str],
        execution_modes: Sequence[ExecutionMode] = ("embedded", "sidecar"),
        author: str | None = None,
        repository: str | None = None,
        entrypoint: str | None = None,
    ) -> None:
        self.name = name
        self._meta: dict[str, Any] = {
            "name": name,
            "version": version,
            "description": description,
            "division": division,
            "subsystem": subsystem,
            "tags": list(tags),
            "execution_modes": list(execution_modes),
            "author": author,
            "repository": repository,
            "entrypoint": entrypoint,
        }
        self._functions: dict[str, _Function] = {}
        self._parts: dict[str, Organ] = {}
        self._card: OrganCard | None = None

    def function(
        self,
        *,
        tags: Sequence[str],
        examples: Sequence[dict[str, Any] | FunctionExample],
        side_effects: Sequence[Effect],
        idempotent: bool,
        slo: FunctionSlo | None = None,
        residency: Residency | str = Residency.LOCAL,
        name: str | None = None,
        description: str | None = None,
        cost: float = 0.0,
    ) -> Callable[[F], F]:
        """Register a typed function; side effects and idempotency must be declared, never guessed."""

        def register(function: F) -> F:
            op = name or function.__name__
            if op in self._functions:
                raise ValueError(f"organ '{self.name}' already has a function named {op!r}")
            signature = signature_of(function, StimulusContext, f"{self.name}_{op}_input")
            text = description or inspect.getdoc(function) or ""
            card = FunctionCard(
                name=op,
                description=text.strip(),
                tags=list(tags),
                examples=[FunctionExample.model_validate(e) for e in examples],
                input_schema=signature.input_schema(),
                output_schema=signature.output_schema(),
                slo=slo or FunctionSlo(),
                residency=Residency(residency),
                idempotent=idempotent,
                side_effects=list(side_effects),
            )
            self._functions[op] = _Function(card, function, signature, cost)
            self._card = None
            return function

        return register

    def add_sub_organ(self, part: Organ) -> None:
        """Make `part` reachable as `<part>.<op>`; a part must be a simple organ (no parts of its own)."""
        sub = part.describe().as_sub_organ()
        if sub.name in self._parts or sub.name in self._functions:
            raise ValueError(f"organ '{self.name}' already has a function or part named {sub.name!r}")
        self._parts[sub.name] = part
        self._card = None

    def describe(self) -> OrganCard:
        if self._card is None:
            self._card = OrganCard.model_validate(
                {
                    **{k: v for k, v in self._meta.items() if v is not None},
                    "functions": [f.card for f in self._functions.values()],
                    "sub_organs": [part.describe().as_sub_organ() for part in self._parts.values()],
                }
            )
        return self._card

    async def stimulate(self, stimulus: Stimulus) -> Response:
        started = time.perf_counter()
        function = self._functions.get(stimulus.op)
        if function is None:
            head, _, rest = stimulus.op.partition(".")
            part = self._parts.get(head) if rest else None
            if part is None or rest not in part.describe().operations():
                return unsupported(self.name, stimulus.op, list(self.describe().operations()))
            return await part.stimulate(stimulus.model_copy(update={"op": rest}))
        meter = CpuMeter()
        response = await meter.run(self._run(function, stimulus))
        cpu_ms = meter.ms + (response.cpu_ms or 0.0)
        latency_ms = (time.perf_counter() - started) * 1000
        return response.model_copy(update={"latency_ms": round(latency_ms, 3), "cpu_ms": round(cpu_ms, 3)})

    async def _run(self, function: _Function, stimulus: Stimulus) -> Response:
        """The function's answer; `cpu_ms` holds only what a worker thread spent (the caller adds its own)."""
        try:
            arguments = function.signature.model.model_validate(stimulus.input)
        except ValidationError as exc:
            return _invalid(stimulus.op, exc)
        kwargs = {field: getattr(arguments, field) for field in type(arguments).model_fields}
        for parameter in function.signature.context_parameters:
            kwargs[parameter] = stimulus.context
        worker_ms = 0.0
        try:
            if inspect.iscoroutinefunction(function.call):
                result = await function.call(**kwargs)
            else:
                result, worker_ms = await asyncio.to_thread(thread_cpu_ms, lambda: function.call(**kwargs))
            output = function.signature.dump(result)
        except OrganError as exc:
            return Response.failure(exc.code, exc.message, **exc.details)
        except Exception as exc:  # a bug in the organ: reported by type, never with its message
            logger.exception("organ '%s' failed in '%s'", self.name, stimulus.op)
            return Response.failure(
                INTERNAL,
                f"organ '{self.name}' failed in '{stimulus.op}' ({type(exc).__name__})",
                op=stimulus.op,
            )
        return Response(ok=True, output=output, cost=function.cost, cpu_ms=worker_ms)


def _invalid(op: str, exc: ValidationError) -> Response:
    violations = [
        {"pointer": "".join(f"/{part}" for part in error["loc"]), "message": error["msg"]}
        for error in exc.errors()
    ]
    summary = "; ".join(f"{v['pointer'] or '/'}: {v['message']}" for v in violations[:5])
    return Response.failure(
        INVALID_INPUT, f"{len(violations)} input problem(s) for '{op}': {summary}", violations=violations
    )
