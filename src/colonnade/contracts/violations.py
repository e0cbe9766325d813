"""UAC001/UAC002: where a raw document breaks the published contract schema, one finding each.

jsonschema's own messages name neither the field nor the fix, so each violation is rewritten:
which field, what it holds, what it should hold and, for typos, which field was probably meant.
Violations inside an endpoint's `llm` block are UAC002; every other one is UAC001.
"""

from __future__ import annotations

import datetime
import difflib
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from functools import cache
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError
from referencing import Registry

from colonnade.contracts.findings import Finding, Severity
from colonnade.contracts.model import KEBAB, OPERATION_ID, SECRET_NAME, SEMVER
from colonnade.contracts.uac_json_schema import contract_json_schema
from colonnade.errors import ColonnadeError

__all__ = [
    "MAX_DEPTH",
    "MAX_NODES",
    "DocumentTooComplex",
    "Explained",
    "describe_value",
    "dotted",
    "expected_of",
    "explain",
    "explain_all",
    "json_shaped",
    "pointer_of",
    "schema_violations",
    "shorten",
]

MAX_DEPTH = 64
MAX_NODES = 1_000_000

Explained = tuple[list[object], str, str]

_SCHEMA_FIX = "change the value to match the contract schema (src/colonnade/schemas/uac.schema.json)"
_FRIENDLY_PATTERNS = {
    KEBAB: "kebab-case: lowercase letters and digits, words joined by single hyphens (e.g. 'customer-api')",
    SEMVER: "a semantic version such as '1.0.0' (quote it in YAML)",
    OPERATION_ID: "an identifier of letters, digits and underscores, not starting with a digit "
    "(e.g. 'getCustomer')",
    SECRET_NAME: "the *name* of a secret, such as 'CRM_API_TOKEN' (never the secret itself)",
    r"^https?://[^\s/]+": "an http:// or https:// URL (e.g. 'https://api.example.com')",
    "^/": "a path starting with '/' (e.g. '/customers/{customer_id}')",
}
_TYPE_NAMES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "array": "a list",
    "object": "a mapping",
    "null": "null",
}


def pointer_of(tokens: Sequence[object]) -> str:
    """RFC 6901 JSON pointer for a sequence of keys and indexes."""
    return "".join("/" + str(t).replace("~", "~0").replace("/", "~1") for t in tokens)


def dotted(tokens: Sequence[object]) -> str:
    """How a location reads in a message: `endpoints[0].llm.summary`."""
    out = ""
    for token in tokens:
        out += f"[{token}]" if isinstance(token, int) else (f".{token}" if out else str(token))
    return out or "the contract"


def describe_value(value: Any) -> str:
    """A short, type-revealing rendering of a value for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, str):
        shown = value if len(value) <= 60 else value[:57] + "..."
        return f"the string {json.dumps(shown, ensure_ascii=False)}"
    if isinstance(value, list):
        return f"a list of {len(value)} item(s)"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


# --- the JSON data model ---------------------------------------------------------------------


class DocumentTooComplex(ColonnadeError):
    """Nesting or size (e.g. a YAML alias bomb) beyond anything a contract sensibly needs."""

    code = "C-CONTRACT-TOO-COMPLEX"

    def __init__(self, finding: Finding) -> None:
        self.finding = finding
        super().__init__(finding.message)


def json_shaped(data: Any) -> tuple[Any, list[Finding]]:
    """A JSON-data copy of a parsed YAML document, plus UAC001 findings for what JSON cannot hold.

    YAML dates become ISO strings (what the author meant), sets and tuples lists, numeric keys
    strings; boolean and null keys (`on:`, `yes:`, `~:`) and binary values are reported;
    recursive aliases are cut. Raises DocumentTooComplex past MAX_DEPTH levels or MAX_NODES values.
    """
    shaper = _Shaper()
    return shaper.shape(data, [], ()), shaper.findings


class _Shaper:
    def __init__(self) -> None:
        self.findings: list[Finding] = []
        self.nodes = 0

    def shape(self, value: Any, tokens: list[object], open_ids: tuple[int, ...]) -> Any:
        self._count(tokens)
        if value is None or isinstance(value, str | bool | int | float):
            return value
        if isinstance(value, datetime.date):
            return value.isoformat()
        if isinstance(value, set | frozenset):
            value = sorted(value, key=repr)
        if not isinstance(value, dict | list | tuple):
            self._report(
                tokens,
                f"{dotted(tokens)} is a {type(value).__name__} value, which JSON cannot hold",
                "use a string, number, true/false, null, list or mapping",
            )
            return str(value)
        if id(value) in open_ids:
            self._report(
                tokens,
                f"{dotted(tokens)} contains itself (a recursive YAML alias)",
                "replace the alias (*name) with a copy of the data",
            )
            return None
        inner = (*open_ids, id(value))
        if isinstance(value, dict):
            shaped: dict[str, Any] = {}
            for key, item in value.items():
                name = self._key(key, tokens)
                shaped[name] = self.shape(item, [*tokens, name], inner)
            return shaped
        return [self.shape(item, [*tokens, i], inner) for i, item in enumerate(value)]

    def _count(self, tokens: list[object]) -> None:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            problem = f"the document holds more than {MAX_NODES} values (a YAML alias bomb?)"
        elif len(tokens) > MAX_DEPTH:
            problem = f"the document nests deeper than {MAX_DEPTH} levels"
        else:
            return
        raise DocumentTooComplex(
            Finding("UAC001", Severity.ERROR, pointer_of(tokens), problem, "simplify the document")
        )

    def _key(self, key: object, tokens: list[object]) -> str:
        if isinstance(key, str):
            return key
        text = str(key)
        if key is None or isinstance(key, bool) or not isinstance(key, int | float):
            self._report(
                [*tokens, text],
                f"key {text!r} in {dotted(tokens)} is not a string (YAML reads unquoted "
                "yes/no/on/off/true/false as booleans and ~ as null)",
                "quote the key",
            )
        return text

    def _report(self, tokens: Sequence[object], message: str, fix: str) -> None:
        self.findings.append(Finding("UAC001", Severity.ERROR, pointer_of(tokens), message, fix))


# --- the contract schema ---------------------------------------------------------------------


@cache
def _contract_validator() -> Draft202012Validator:
    schema = contract_json_schema()
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, registry=Registry())


@cache
def _definitions() -> dict[str, Any]:
    definitions: dict[str, Any] = contract_json_schema()["$defs"]
    return definitions


def schema_violations(data: Any) -> list[Finding]:
    """Every violation of the contract schema in `data` (JSON-shaped: see `json_shaped`)."""
    if data is None:
        fix = "write a contract: a mapping with name, version, tenant, display_name, description, ..."
        return [Finding("UAC001", Severity.ERROR, "", "the document is empty", fix)]
    findings: list[Finding] = []
    for tokens, message, fix in explain_all(_contract_validator().iter_errors(data), (), _SCHEMA_FIX):
        in_llm = len(tokens) >= 3 and tokens[0] == "endpoints" and tokens[2] == "llm"
        code = "UAC002" if in_llm else "UAC001"
        findings.append(Finding(code, Severity.ERROR, pointer_of(tokens), message, fix))
    return list(dict.fromkeys(findings))


def explain_all(
    errors: Iterable[ValidationError], base: Sequence[object], fallback_fix: str
) -> Iterator[Explained]:
    """`explain` each error, skipping a type error where an enum error already says what is allowed."""
    errors = list(errors)
    enum_paths = {tuple(e.absolute_path) for e in errors if e.validator == "enum"}
    for error in errors:
        if error.validator == "type" and tuple(error.absolute_path) in enum_paths:
            continue
        yield from explain(error, base, fallback_fix)


def explain(error: ValidationError, base: Sequence[object], fallback_fix: str) -> Iterator[Explained]:
    """(location tokens, message, fix) for each problem behind one jsonschema error.

    `base` locates the validated instance inside the document, so messages and pointers are
    document-wide; one error can stand for several problems (e.g. two unknown fields).
    """
    tokens = [*base, *error.absolute_path]
    if error.validator in ("anyOf", "oneOf"):
        branch = _relevant_branch(error)
        if branch is None and error.validator == "oneOf":
            branch = _mode_branch(error)
        if branch is not None:
            yield from explain_all(branch, base, fallback_fix)
            return
        modes = _modes(error.validator_value) if error.validator == "oneOf" else None
        if modes is not None and isinstance(error.instance, dict):
            allowed = ", ".join(str(mode["const"]) for mode in modes if isinstance(mode, dict))
            written = describe_value(error.instance.get("mode"))
            yield (
                [*tokens, "mode"],
                f"{dotted([*tokens, 'mode'])} is {written}, expected one of: {allowed}",
                (f"set mode to one of: {allowed}"),
            )
            return
        if modes is not None:
            expected = _type_text("object")
            yield (
                tokens,
                f"{dotted(tokens)} must be {expected}, got {describe_value(error.instance)}",
                (f"change it to {expected}"),
            )
            return
    if error.validator == "required":
        yield from _missing(error, tokens)
    elif error.validator == "additionalProperties" and error.validator_value is False:
        yield from _unknown(error, tokens)
    else:
        message, fix = _explain(error, tokens, fallback_fix)
        yield tokens, message, fix


def _relevant_branch(error: ValidationError) -> list[ValidationError] | None:
    """For `X | null` fields: the errors of the X branch (the value is not null, so X was meant)."""
    alternatives = error.validator_value if isinstance(error.validator_value, list) else []
    if len(alternatives) != 2 or {"type": "null"} not in alternatives:
        return None
    wanted = 1 - alternatives.index({"type": "null"})
    errors = [child for child in error.context or [] if child.relative_schema_path[0] == wanted]
    return errors or None


def _modes(alternatives: object) -> list[object] | None:
    """The `mode` constant of each alternative of a oneOf of mappings told apart by `mode`."""
    if not isinstance(alternatives, list):
        return None
    modes: list[object] = []
    for alternative in alternatives:
        ref = alternative.get("$ref") if isinstance(alternative, dict) else None
        definition = _definitions().get(ref.removeprefix("#/$defs/")) if isinstance(ref, str) else None
        mode = (definition or {}).get("properties", {}).get("mode")
        if not isinstance(mode, dict) or "const" not in mode:
            return None
        modes.append(mode)
    return modes


def _mode_branch(error: ValidationError) -> list[ValidationError] | None:
    """For a oneOf told apart by `mode` (upstream credentials): the errors of the mode written
    (or of the one whose mode is the default, when none is)."""
    modes = _modes(error.validator_value)
    if modes is None or not isinstance(error.instance, dict):
        return None
    written = error.instance.get("mode")
    for index, mode in enumerate(modes):
        assert isinstance(mode, dict)
        if mode["const"] == written or (written is None and mode.get("default") == mode["const"]):
            errors = [child for child in error.context or [] if child.relative_schema_path[0] == index]
            return errors or None
    return None


def _missing(error: ValidationError, tokens: list[object]) -> Iterator[Explained]:
    instance = error.instance if isinstance(error.instance, dict) else {}
    schema = error.schema if isinstance(error.schema, dict) else {}
    properties = schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    required = error.validator_value if isinstance(error.validator_value, list) else []
    for name in required:
        if name in instance:
            continue
        yield (
            [*tokens, name],
            f"{dotted(tokens)} is missing the required field '{name}'",
            f"add '{name}': {expected_of(properties.get(name))}",
        )


def _unknown(error: ValidationError, tokens: list[object]) -> Iterator[Explained]:
    schema = error.schema if isinstance(error.schema, dict) else {}
    properties = schema.get("properties")
    known = [str(k) for k in properties] if isinstance(properties, dict) else []
    instance = error.instance if isinstance(error.instance, dict) else {}
    for key in instance:
        if key in known:
            continue
        close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.6)
        hint = f"did you mean '{close[0]}'? " if close else ""
        allowed = f"allowed fields: {', '.join(known)}" if known else "no fields are allowed here"
        yield (
            [*tokens, key],
            f"unknown field '{key}' in {dotted(tokens)}",
            f"{hint}remove it or rename it; {allowed}",
        )


def _explain(error: ValidationError, tokens: list[object], fallback_fix: str) -> tuple[str, str]:
    where = dotted(tokens)
    value = error.instance
    keyword = error.validator
    if keyword == "type":
        expected = _type_text(error.validator_value)
        fix = f"change it to {expected}"
        if isinstance(value, int | float) and not isinstance(value, bool) and "a string" in expected:
            fix += f' (quote it: "{value}")'
        return f"{where} must be {expected}, got {describe_value(value)}", fix
    if keyword == "enum" and isinstance(error.validator_value, list):
        allowed = [v if isinstance(v, str) else json.dumps(v) for v in error.validator_value]
        fix = f"use one of: {', '.join(allowed)}"
        same = [a for a in allowed if isinstance(value, str) and a.lower() == value.lower()]
        if same:
            fix = f"write it as '{same[0]}' ({fix})"
        return f"{where} is {describe_value(value)}, expected one of: {', '.join(allowed)}", fix
    if keyword == "pattern":
        return _pattern(where, value, str(error.validator_value))
    if keyword == "minItems":
        return (
            f"{where} must have at least {error.validator_value} item(s), got {describe_value(value)}",
            f"add at least {error.validator_value} item(s)",
        )
    if keyword in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        bound = f"{keyword} {error.validator_value}"
        return f"{where} is {describe_value(value)}, which breaks {bound}", f"use a value within {bound}"
    return f"{where}: {shorten(error.message)}", fallback_fix


def _pattern(where: str, value: Any, pattern: str) -> tuple[str, str]:
    wanted = _FRIENDLY_PATTERNS.get(pattern, f"a string matching {pattern}")
    fix = f"change it to {wanted}"
    if pattern == KEBAB and isinstance(value, str):
        suggestion = re.sub(r"[^a-z0-9]+", "-", value.lower()).strip("-")
        fix += f", e.g. '{suggestion}'" if suggestion else ""
    return f"{where} is {describe_value(value)}, which is not {wanted}", fix


def _type_text(types: object) -> str:
    names = types if isinstance(types, list) else [types]
    return " or ".join(_TYPE_NAMES.get(str(name), str(name)) for name in names)


def shorten(text: str, limit: int = 240) -> str:
    """Cap library messages that may embed a whole (large) value."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def expected_of(schema: Any) -> str:
    """What a schema of the contract wants, in words, for fix hints."""
    if not isinstance(schema, dict):
        return "a value"
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return expected_of(_definitions().get(ref.removeprefix("#/$defs/")))
    if isinstance(schema.get("enum"), list):
        return "one of " + ", ".join(str(v) for v in schema["enum"])
    options = [s for s in schema.get("anyOf", []) if s != {"type": "null"}]
    if len(options) == 1:
        return expected_of(options[0])
    if isinstance(schema.get("pattern"), str):
        return _FRIENDLY_PATTERNS.get(schema["pattern"], f"a string matching {schema['pattern']}")
    kind = schema.get("type")
    if kind == "array":
        return f"a list (each item {expected_of(schema.get('items'))})"
    if kind == "object" and schema.get("required"):
        return f"a mapping with {', '.join(schema['required'])}"
    return _type_text(kind) if kind else "a value"
