"""The published JSON Schemas (Draft 2020-12) of the call envelopes, generated from `calls/envelope.py`.

The pydantic models are the single source of truth. The files under `schemas/` are this
module's output, checked in so that clients can validate envelopes without running Colonnade,
served by the REST surface, and compared with a fresh generation by a test (`make schemas`
rewrites them). Run `python -m colonnade.calls.envelope_schemas [DIRECTORY]` to write them.

The request schema describes what a caller may send (validation mode: fields with defaults are
optional). The result schema describes what a caller receives (serialization mode): fields that
are always serialized with a value (lists, metrics, numbers) are required, and one invariant the
models do not spell out is added: a success carries no error, every other status carries one.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode
from pydantic_core import core_schema

from colonnade.calls.envelope import CallRequest, CallResult, CallStatus
from colonnade.calls.envelope_v1 import CallResultV1, OutcomeV1

__all__ = [
    "CALL_REQUEST",
    "CALL_RESULT",
    "CALL_RESULT_V1",
    "DIALECT",
    "ENVELOPE_SCHEMAS",
    "SCHEMA_DIR",
    "EnvelopeSchema",
    "drifted_files",
    "main",
    "write_schemas",
]

DIALECT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_DIR = Path(__file__).resolve().parents[1] / "schemas"
_ID_BASE = "https://colonnade.dev/schemas/"
_HEADER = ("$schema", "$id", "title", "description")
_NO_ERROR = [CallStatus.SUCCESS.value, CallStatus.SUCCESS_PREP.value, CallStatus.PENDING.value]


class _AlwaysPresentRequired(GenerateJsonSchema):
    """Serialization mode: a field is required unless its default is None (it may then be null)."""

    def field_is_required(
        self,
        field: core_schema.ModelField | core_schema.DataclassField | core_schema.TypedDictField,
        total: bool,
    ) -> bool:
        if self.mode != "serialization" or field["type"] == "typed-dict-field":
            return super().field_is_required(field, total)
        schema = field["schema"]
        if schema["type"] != "default":
            return True
        return "default_factory" in schema or schema.get("default") is not None


@dataclass(frozen=True, slots=True)
class EnvelopeSchema:
    """One published schema: which model, in which mode, under which name."""

    name: str
    model: type[BaseModel]
    mode: JsonSchemaMode
    title: str
    description: str

    @property
    def filename(self) -> str:
        return f"{self.name}.schema.json"

    @property
    def schema_id(self) -> str:
        return _ID_BASE + self.filename

    @property
    def path(self) -> Path:
        return SCHEMA_DIR / self.filename

    def schema(self) -> dict[str, Any]:
        """A fresh copy of the schema, keys in their published order."""
        return json.loads(self.text())  # type: ignore[no-any-return]

    def text(self) -> str:
        """The schema exactly as written to disk: 2-space indent, trailing newline."""
        return _text(self)


CALL_REQUEST = EnvelopeSchema(
    name="call-request",
    model=CallRequest,
    mode="validation",
    title="Colonnade CallRequest",
    description=(
        "One call of one tool, as sent to POST /v1/calls. tool_id is a canonical name "
        "(tenant:api:tool), a wire name, or a bare tool name (llm.tool_name) that only one tool the "
        "caller may call bears; every other field is optional."
    ),
)
CALL_RESULT = EnvelopeSchema(
    name="call-result",
    model=CallResult,
    mode="serialization",
    title="Colonnade CallResult",
    description=(
        "The outcome of one call in envelope version 2, what MCP answers by default and REST when the "
        "request asks for it (envelope_version 2 or header Colonnade-Envelope-Version: 2). status is "
        "definitive: success and success_prep carry no error; pending carries no error but a pending "
        "object (the call is parked: what to do next, the token that resumes it, its expiry); "
        "retryable_error, terminal_error and invalid_request carry an error with a stable code (see "
        "docs/errors.md) and a fix hint."
    ),
)
CALL_RESULT_V1 = EnvelopeSchema(
    name="call-result-v1",
    model=CallResultV1,
    mode="serialization",
    title="Colonnade CallResult, envelope version 1",
    description=(
        "The outcome of one call in envelope version 1, what POST /v1/calls answers unless the request "
        "asks for version 2. status is one of four outcomes and definitive: success carries no error, "
        "every other status carries an error with a stable code (docs/errors.md) and a fix hint. A "
        "prepared two-phase call is a success with a commit_token; a call parked for an approval is a "
        "terminal_error P-PRECOND-APPROVAL-PENDING whose details carry approval_id, token, expires_at "
        "and next_action. Every field is required; provenance is always an object."
    ),
)
ENVELOPE_SCHEMAS: tuple[EnvelopeSchema, ...] = (CALL_REQUEST, CALL_RESULT, CALL_RESULT_V1)


@cache
def _text(envelope: EnvelopeSchema) -> str:
    return json.dumps(_generate(envelope), indent=2, ensure_ascii=False) + "\n"


def _generate(envelope: EnvelopeSchema) -> dict[str, Any]:
    generated = envelope.model.model_json_schema(mode=envelope.mode, schema_generator=_AlwaysPresentRequired)
    generated["$schema"] = DIALECT
    generated["$id"] = envelope.schema_id
    generated["title"] = envelope.title
    generated["description"] = envelope.description
    if envelope.model is CallResult:
        generated["allOf"] = _status_invariants()
    if envelope.model is CallResultV1:
        generated["allOf"] = _error_invariants([OutcomeV1.SUCCESS.value])
    return _ordered(generated)


def _error_invariants(without_error: list[str]) -> list[dict[str, Any]]:
    """Status is definitive: never a success with an error, never a failure without one."""
    no_error: dict[str, Any] = {"properties": {"status": {"enum": without_error}}, "required": ["status"]}
    return [
        {"if": no_error, "then": {"properties": {"error": {"type": "null"}}}},
        {
            "if": {"not": no_error},
            "then": {"properties": {"error": {"type": "object"}}, "required": ["error"]},
        },
    ]


def _status_invariants() -> list[dict[str, Any]]:
    """Version 2: the error invariants, and a pending object exactly when the call is parked."""
    pending: dict[str, Any] = {
        "properties": {"status": {"const": CallStatus.PENDING.value}},
        "required": ["status"],
    }
    return [
        *_error_invariants(_NO_ERROR),
        {
            "if": pending,
            "then": {"properties": {"pending": {"type": "object"}}, "required": ["pending"]},
            "else": {"properties": {"pending": {"type": "null"}}},
        },
    ]


def _ordered(schema: dict[str, Any]) -> dict[str, Any]:
    """Header keys first, `$defs` last, everything else as pydantic (deterministically) emits it."""
    ordered = {key: schema[key] for key in _HEADER if key in schema}
    ordered.update({k: v for k, v in schema.items() if k not in ordered and k != "$defs"})
    if "$defs" in schema:
        ordered["$defs"] = schema["$defs"]
    return ordered


def write_schemas(directory: str | Path = SCHEMA_DIR) -> list[Path]:
    """Write every envelope schema into `directory` (created if needed); returns the paths written."""
    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for envelope in ENVELOPE_SCHEMAS:
        path = target / envelope.filename
        path.write_text(envelope.text(), encoding="utf-8")
        written.append(path)
    return written


def drifted_files(directory: str | Path = SCHEMA_DIR) -> list[Path]:
    """The schema files in `directory` that are missing or differ from a fresh generation."""
    stale = []
    for envelope in ENVELOPE_SCHEMAS:
        path = Path(directory) / envelope.filename
        if not path.is_file() or path.read_text(encoding="utf-8") != envelope.text():
            stale.append(path)
    return stale


def main(argv: Sequence[str] | None = None) -> Literal[0, 2]:
    """`python -m colonnade.calls.envelope_schemas [DIRECTORY]`: what `make schemas` runs."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) > 1:
        print("usage: python -m colonnade.calls.envelope_schemas [DIRECTORY]", file=sys.stderr)
        return 2
    try:
        written = write_schemas(args[0] if args else SCHEMA_DIR)
    except OSError as exc:
        print(f"error: cannot write the envelope schemas: {exc}", file=sys.stderr)
        return 2
    for path in written:
        print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
