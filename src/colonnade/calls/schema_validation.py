"""Compiled JSON Schema validators, cached per schema, reporting every violation with a pointer."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import jsonschema_rs

__all__ = ["Violation", "violations"]


@dataclass(frozen=True, slots=True)
class Violation:
    pointer: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"pointer": self.pointer, "message": self.message}


def _pointer(parts: Any) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


@lru_cache(maxsize=4096)
def _compiled(schema_json: str) -> Any:
    return jsonschema_rs.validator_for(json.loads(schema_json))


# Tool schemas are long-lived objects checked on every call: find their validator by identity
# first (the entry keeps the schema alive, so its id cannot be reused), and by content otherwise,
# which spares serialising the schema per call. Like the tools that own them, schemas are never
# changed in place once in use.
_by_identity: dict[int, tuple[dict[str, Any], Any]] = {}
_IDENTITY_LIMIT = 4096


def _validator(schema: dict[str, Any]) -> Any:
    entry = _by_identity.get(id(schema))
    if entry is not None and entry[0] is schema:
        return entry[1]
    validator = _compiled(json.dumps(schema, sort_keys=True))
    if len(_by_identity) >= _IDENTITY_LIMIT:
        _by_identity.clear()
    _by_identity[id(schema)] = (schema, validator)
    return validator


def violations(schema: dict[str, Any], instance: Any, limit: int = 50) -> list[Violation]:
    """All violations (up to `limit`), in a stable order; [] when the instance is valid."""
    validator = _validator(schema)
    if validator.is_valid(instance):
        return []
    found = [Violation(_pointer(e.instance_path), e.message) for e in validator.iter_errors(instance)]
    found.sort(key=lambda v: (v.pointer, v.message))
    return found[:limit]
