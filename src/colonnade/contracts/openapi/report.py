"""What an OpenAPI import produced and what it could not do, for the import report."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["ImportNote", "ImportResult", "ImportedOperation", "ReviewItem", "SkippedOperation"]


@dataclass(frozen=True, slots=True)
class ImportedOperation:
    """One operation that became an endpoint of the contract."""

    method: str
    path: str
    operation_id: str
    tool_name: str

    def __str__(self) -> str:
        return f"{self.method} {self.path}"


@dataclass(frozen=True, slots=True)
class ReviewItem:
    """An imported operation whose `llm` block was (partly) drafted and needs a human's check."""

    method: str
    path: str
    operation_id: str
    reason: str

    def __str__(self) -> str:
        return f"{self.method} {self.path} ({self.operation_id}): {self.reason}"


@dataclass(frozen=True, slots=True)
class SkippedOperation:
    """An operation that could not be mapped; `pointer` locates it in the OpenAPI document."""

    method: str
    path: str
    operation_id: str | None
    reason: str
    pointer: str

    def __str__(self) -> str:
        named = f" ({self.operation_id})" if self.operation_id else ""
        return f"{self.method} {self.path}{named}: {self.reason}"


@dataclass(frozen=True, slots=True)
class ImportNote:
    """Something imported with a loss or a guess worth knowing (`subject` says what it concerns)."""

    subject: str
    message: str

    def __str__(self) -> str:
        return f"{self.subject}: {self.message}"


@dataclass(frozen=True)
class ImportResult:
    """The draft contract as plain data (ready to dump as YAML) and the import report."""

    contract_data: dict[str, Any]
    imported: list[ImportedOperation] = field(default_factory=list)
    needs_review: list[ReviewItem] = field(default_factory=list)
    skipped: list[SkippedOperation] = field(default_factory=list)
    notes: list[ImportNote] = field(default_factory=list)
    needs_human: list[ImportNote] = field(default_factory=list)
    """What the import could not settle and a person must do (credentials, mostly)."""

    def report(self) -> dict[str, Any]:
        """The import report as JSON data (`import-openapi --format json`)."""
        reviewed = {item.operation_id for item in self.needs_review}
        return {
            "imported": [{**asdict(op), "needs_review": op.operation_id in reviewed} for op in self.imported],
            "needs_review": [asdict(item) for item in self.needs_review],
            "needs_human": [asdict(note) for note in self.needs_human],
            "skipped": [asdict(skip) for skip in self.skipped],
            "notes": [asdict(note) for note in self.notes],
        }
