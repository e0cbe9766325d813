"""Capability cards: what an organ says about itself, enough to serve it without importing it.

A card names the organ, files it (division, subsystem, tags), and describes every function it
answers: schemas, examples, service objectives, residency, idempotency and side effects. The
gateway projects cards into catalog tools (static discovery) and imports the organ's module only
when one of its functions is first called. Composite organs list their parts as sub-organs; a
sub-organ's function `search` of the sub-organ `similarity` is the operation `similarity.search`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from colonnade.contracts.model import SEMVER

__all__ = [
    "EFFECTS",
    "ENTRYPOINT",
    "FUNCTION_NAME",
    "ORGAN_NAME",
    "TAG",
    "Effect",
    "ExecutionMode",
    "FunctionCard",
    "FunctionExample",
    "FunctionSlo",
    "OrganCard",
    "Residency",
    "SubOrganCard",
]

TAG = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
ORGAN_NAME = r"^[a-z][a-z0-9-]*$"
FUNCTION_NAME = r"^[a-z][a-z0-9_]*$"
ENTRYPOINT = r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*(?::[A-Za-z_][A-Za-z0-9_]*)?$"

Effect = Literal["read", "write", "delete", "network"]
EFFECTS: tuple[str, ...] = ("read", "write", "delete", "network")
"""What a function may do besides computing its output: read or change the organ's state, delete
from it, or reach the network. An empty list declares a pure function."""

ExecutionMode = Literal["embedded", "sidecar"]


class Residency(StrEnum):
    """Where the function's data may live and be processed."""

    LOCAL = "local"
    REGIONAL = "regional"
    GLOBAL = "global"


class _Card(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FunctionSlo(_Card):
    """Service objectives: the queue cap is enforced, the latency and error rate are observed."""

    p95_latency_ms: int | None = Field(
        default=None, ge=1, description="95 % of calls finish within this time (observed in metrics)."
    )
    max_error_rate: float | None = Field(
        default=None, ge=0, le=1, description="Share of calls that may fail (observed in metrics)."
    )
    queue_cap: int | None = Field(
        default=None, ge=1, description="Calls in flight at most; more are refused at once, retryable."
    )


class FunctionExample(_Card):
    """One synthetic use of a function: its input and, optionally, what the output contains."""

    description: str = Field(default="", description="What the example shows.")
    input: dict[str, Any] = Field(description="Arguments; they must match the input schema.")
    output: Any = Field(default=None, description="The output, or a part of it.")


class FunctionCard(_Card):
    name: str = Field(pattern=FUNCTION_NAME, description="The operation's name, unique in its organ.")
    description: str = Field(description="What the function does and when to use it.")
    tags: list[str] = Field(description="2-5 lowercase, hyphenated tags.")
    examples: list[FunctionExample] = Field(description="2-4 synthetic examples.")
    input_schema: dict[str, Any] = Field(description="JSON Schema (Draft 2020-12) of the input object.")
    output_schema: dict[str, Any] | None = Field(default=None, description="JSON Schema of the output.")
    slo: FunctionSlo = Field(default_factory=FunctionSlo)
    residency: Residency = Field(default=Residency.LOCAL)
    idempotent: bool = Field(description="Repeating a call with the same input has no further effect.")
    side_effects: list[Effect] = Field(description="read, write, delete, network; [] for a pure function.")


class SubOrganCard(_Card):
    """A part of a composite organ; its functions are reached as `sub_organ.function`."""

    name: str = Field(pattern=FUNCTION_NAME)
    description: str
    tags: list[str] = Field(default_factory=list)
    functions: list[FunctionCard]


class OrganCard(_Card):
    name: str = Field(pattern=ORGAN_NAME, description="The organ's name: the middle of its tools' names.")
    version: str = Field(pattern=SEMVER)
    description: str
    division: str = Field(description="The broad area the organ belongs to (e.g. storage).")
    subsystem: str = Field(description="The part of that area it serves (e.g. blobs).")
    tags: list[str] = Field(description="3-8 lowercase, hyphenated tags.")
    execution_modes: list[ExecutionMode] = Field(min_length=1)
    functions: list[FunctionCard]
    sub_organs: list[SubOrganCard] = Field(default_factory=list)
    author: str | None = None
    repository: str | None = None
    entrypoint: str | None = Field(
        default=None,
        pattern=ENTRYPOINT,
        description="`module:attribute` of the organ object, imported when a function is first called.",
    )

    def operations(self) -> dict[str, FunctionCard]:
        """Every operation the organ answers, sub-organs' included (`sub.function`), in card order."""
        found = {function.name: function for function in self.functions}
        for sub in self.sub_organs:
            for function in sub.functions:
                found[f"{sub.name}.{function.name}"] = function
        return found

    def as_sub_organ(self) -> SubOrganCard:
        """This organ's card as a part of a composite organ (one level: a part has no parts)."""
        if self.sub_organs:
            raise ValueError(f"organ {self.name!r} has sub-organs itself; a sub-organ must be a simple organ")
        return SubOrganCard(
            name=self.name.replace("-", "_"),
            description=self.description,
            tags=self.tags,
            functions=self.functions,
        )

    def to_data(self) -> dict[str, Any]:
        """The card as plain data (what organ.json and organ.toml hold): no null values."""
        return self.model_dump(mode="json", exclude_none=True)
