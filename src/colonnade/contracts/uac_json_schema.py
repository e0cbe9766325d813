"""The published JSON Schema of a contract, generated from the pydantic model.

The model is the single source of truth; `schemas/uac.schema.json` is this module's
output, checked in so editors and other tools can use it, and a test fails when it drifts.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from colonnade.contracts.model import Contract

__all__ = [
    "DIALECT",
    "PUBLISHED_SCHEMA_PATH",
    "SCHEMA_ID",
    "contract_json_schema",
    "schema_text",
    "write_schema",
]

DIALECT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_ID = "https://colonnade.dev/schemas/uac.schema.json"
PUBLISHED_SCHEMA_PATH = Path(__file__).resolve().parents[1] / "schemas" / "uac.schema.json"

_HEADER = ("$schema", "$id", "title", "description")


def contract_json_schema() -> dict[str, Any]:
    """A fresh copy of the contract schema (Draft 2020-12), keys in a stable order."""
    return json.loads(schema_text())  # type: ignore[no-any-return]


@cache
def schema_text() -> str:
    """The schema exactly as written to disk: 2-space indent, trailing newline."""
    return json.dumps(_ordered(_generate()), indent=2, ensure_ascii=False) + "\n"


def write_schema(path: str | Path) -> Path:
    """Write the schema to `path` (parents created); returns the path written."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(schema_text(), encoding="utf-8")
    return target


def _generate() -> dict[str, Any]:
    generated = Contract.model_json_schema(mode="validation")
    generated["$schema"] = DIALECT
    generated["$id"] = SCHEMA_ID
    generated["title"] = "Universal API Contract (UAC)"
    return generated


def _ordered(schema: dict[str, Any]) -> dict[str, Any]:
    """Header keys first, `$defs` last, everything else as pydantic (deterministically) emits it."""
    ordered = {key: schema[key] for key in _HEADER if key in schema}
    ordered.update({k: v for k, v in schema.items() if k not in ordered and k != "$defs"})
    if "$defs" in schema:
        ordered["$defs"] = schema["$defs"]
    return ordered
