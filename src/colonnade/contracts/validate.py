"""Validate contract documents: every finding in one run, then (when error-free) the typed model.

`validate_data` never raises on any parsed document, however odd its shape: rules read raw
data defensively (see `rules.py`), so a broken document still gets all its findings at once.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from colonnade.contracts.findings import Finding, Severity
from colonnade.contracts.load import ContractLoadError, Document, load_document
from colonnade.contracts.model import Contract
from colonnade.contracts.rules import RULES, Subject
from colonnade.contracts.violations import DocumentTooComplex, json_shaped, pointer_of
from colonnade.errors import ColonnadeError

__all__ = [
    "ContractInvalid",
    "ContractLoadError",
    "load_contract",
    "parse_contract",
    "validate_data",
    "validate_document",
]


class ContractInvalid(ColonnadeError):
    """The document has at least one error-severity finding; `findings` holds all of them."""

    code = "C-CONTRACT-INVALID"

    def __init__(self, findings: Sequence[Finding], path: str | None = None) -> None:
        self.findings = list(findings)
        self.path = path
        errors = self.errors
        head = "; ".join(f"{f.code} {f.path or '/'}: {f.message}" for f in errors[:3])
        more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
        super().__init__(f"{path or 'contract'}: {len(errors)} error(s): {head}{more}")

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.is_error]


def validate_data(data: Any) -> list[Finding]:
    """All findings for one parsed document, in document order."""
    return _check(data)[1]


def validate_document(doc: Document) -> list[Finding]:
    """Like `validate_data`, with each finding's line and column taken from the source."""
    return _positioned(doc, validate_data(doc.data))


def parse_contract(data: Any) -> Contract:
    """The typed contract; raises ContractInvalid when any error-severity finding exists."""
    shaped, findings = _check(data)
    if any(f.is_error for f in findings):
        raise ContractInvalid(findings)
    return _model(shaped, findings)


def load_contract(path: str | Path) -> Contract:
    """Load, validate and parse one file; raises ContractLoadError or ContractInvalid."""
    doc = load_document(path)
    shaped, findings = _check(doc.data)
    findings = _positioned(doc, findings)
    if any(f.is_error for f in findings):
        raise ContractInvalid(findings, doc.path)
    return _model(shaped, findings, doc.path)


def _check(data: Any) -> tuple[Any, list[Finding]]:
    try:
        shaped, shape_findings = json_shaped(data)
    except DocumentTooComplex as exc:
        return None, [exc.finding]
    subject = Subject(shaped, shape_findings)
    findings = list(dict.fromkeys(f for rule in RULES for f in rule(subject)))
    return shaped, _in_document_order(findings, shaped)


def _model(shaped: Any, findings: list[Finding], path: str | None = None) -> Contract:
    """Build the model; a disagreement with the schema becomes UAC001 findings, never a traceback."""
    try:
        return Contract.model_validate(shaped)
    except ValidationError as exc:
        extra = [
            Finding("UAC001", Severity.ERROR, pointer_of(error["loc"]), error["msg"], "fix the value")
            for error in exc.errors()
        ]
        raise ContractInvalid([*findings, *extra], path) from None


def _positioned(doc: Document, findings: list[Finding]) -> list[Finding]:
    out: list[Finding] = []
    for finding in findings:
        position = doc.position(finding.path)
        out.append(finding if position is None else replace(finding, line=position[0], column=position[1]))
    return out


def _in_document_order(findings: list[Finding], data: Any) -> list[Finding]:
    """Sort by where each pointer (or its nearest existing ancestor) appears in the document."""
    order = {pointer: index for index, pointer in enumerate(_preorder(data, ""))}

    def key(finding: Finding) -> tuple[int, int]:
        pointer, missing = finding.path, 0
        while pointer not in order and pointer:
            pointer, missing = pointer.rsplit("/", 1)[0], 1
        return order.get(pointer, 0), missing

    return sorted(findings, key=key)


def _preorder(value: Any, pointer: str) -> Iterator[str]:
    yield pointer
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _preorder(item, f"{pointer}/{str(key).replace('~', '~0').replace('/', '~1')}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _preorder(item, f"{pointer}/{index}")
