"""Rust types (serde) for the gateway's envelopes, generated from its JSON Schemas.

Run: python clients/rust/generate_types.py [OUT] (default: clients/rust/src/generated.rs).
No maintained JSON-Schema-to-Rust generator is reachable from this machine's registries, and the
envelopes use a small part of JSON Schema (objects, `$ref`, `anyOf` with null, string enums,
arrays, `const`), so this writes the structs itself: one per object schema, field order as in the
schema, a field that may be absent or null as `Option` (written as null only where the schema allows
null, left out where it may only be absent), anything open as `serde_json::Value`.
The conditional rules (`allOf` / `if` / `then`) stay with the schema: serde checks shapes only.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "src" / "colonnade" / "schemas"
ENVELOPES = {
    "call-request.schema.json": "CallRequest",
    "call-result.schema.json": "CallResult",
    "call-result-v1.schema.json": "CallResultV1",
}
_KEYWORDS = {"type", "ref", "fn", "match", "move", "self", "struct", "enum", "impl", "use", "mod", "crate"}


class Writer:
    def __init__(self) -> None:
        self.items: dict[str, str] = {}

    def schema(self, schema: dict[str, Any], name: str) -> None:
        defs = schema.get("$defs", {})
        for def_name, definition in defs.items():
            if def_name not in self.items:
                self.item(def_name, definition)
        self.item(name, schema)

    def item(self, name: str, schema: dict[str, Any]) -> None:
        if "enum" in schema and all(isinstance(v, str) for v in schema["enum"]):
            self.items[name] = _enum(name, schema)
        elif schema.get("type") == "object" and "properties" in schema:
            self.items[name] = self._struct(name, schema)

    def _struct(self, name: str, schema: dict[str, Any]) -> str:
        required = set(schema.get("required", []))
        lines = [
            _doc(schema.get("description"), ""),
            "#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]",
        ]
        lines.append(f"pub struct {name} {{")
        for field, prop in schema["properties"].items():
            rust_type = self._type(prop, f"{name}{_camel(field)}")
            optional = field not in required or _nullable(prop)
            attrs = []
            if _ident(field).removeprefix("r#") != field:
                attrs.append(f'rename = "{field}"')
            if field not in required:
                attrs.append("default")
                if not _nullable(prop):  # may be absent, never null: absent it stays
                    attrs.append('skip_serializing_if = "Option::is_none"')
            if optional and not rust_type.startswith("Option<"):
                rust_type = f"Option<{rust_type}>"
            doc = _doc(prop.get("description"), "    ")
            if doc:
                lines.append(doc)
            if attrs:
                lines.append(f"    #[serde({', '.join(attrs)})]")
            lines.append(f"    pub {_ident(field)}: {rust_type},")
        lines.append("}")
        return "\n".join(line for line in lines if line)

    def _type(self, prop: dict[str, Any], hint: str) -> str:
        if "$ref" in prop:
            return prop["$ref"].rsplit("/", 1)[-1]
        if "anyOf" in prop:
            options = [p for p in prop["anyOf"] if p.get("type") != "null"]
            inner = self._type(options[0], hint) if len(options) == 1 else "serde_json::Value"
            return f"Option<{inner}>" if len(options) < len(prop["anyOf"]) else inner
        if "enum" in prop and all(isinstance(v, str) for v in prop["enum"]):
            self.items.setdefault(hint, _enum(hint, prop))
            return hint
        kind = prop.get("type")
        if "const" in prop and kind == "integer":
            return "i64"
        if kind == "string":
            return "String"
        if kind == "integer":
            return "i64"
        if kind == "number":
            return "f64"
        if kind == "boolean":
            return "bool"
        if kind == "array":
            return f"Vec<{self._type(prop.get('items', {}), hint + 'Item')}>"
        if kind == "object" and "properties" in prop:
            self.items.setdefault(hint, self._struct(hint, prop))
            return hint
        if kind == "object":
            return "serde_json::Map<String, serde_json::Value>"
        return "serde_json::Value"


def _nullable(prop: dict[str, Any]) -> bool:
    """Whether null is a value the schema allows: `anyOf` with null, or a schema that says nothing."""
    if not any(key in prop for key in ("type", "$ref", "anyOf", "enum", "const")):
        return True
    return any(p.get("type") == "null" for p in prop.get("anyOf", []))


def _enum(name: str, schema: dict[str, Any]) -> str:
    lines = [
        _doc(schema.get("description"), ""),
        "#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]",
    ]
    lines.append(f"pub enum {name} {{")
    for value in schema["enum"]:
        lines.append(f'    #[serde(rename = "{value}")]')
        lines.append(f"    {_camel(value)},")
    lines.append("}")
    return "\n".join(line for line in lines if line)


def _camel(text: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[^A-Za-z0-9]+", text) if part)


def _ident(field: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9_]", "_", field)
    return f"r#{cleaned}" if cleaned in _KEYWORDS else cleaned


def _doc(text: str | None, indent: str) -> str:
    if not text:
        return ""
    return "\n".join(f"{indent}/// {line}".rstrip() for line in text.strip().splitlines())


def generate() -> str:
    writer = Writer()
    for file, name in ENVELOPES.items():
        writer.schema(json.loads((SCHEMAS / file).read_text(encoding="utf-8")), name)
    header = (
        "// Generated by clients/rust/generate_types.py from src/colonnade/schemas: do not edit.\n"
        "use serde::{Deserialize, Serialize};\n"
    )
    return header + "\n" + "\n\n".join(writer.items[name] for name in sorted(writer.items)) + "\n"


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent / "src" / "generated.rs"
    out.write_text(generate(), encoding="utf-8")
