"""Card validation: every problem of a card in one run, as findings (code, severity, path, message, fix).

Rules read the raw card data defensively, so a broken card still gets all its findings at once;
what no rule covers (types, unknown fields, name patterns) is reported from the card model as
ORG002. Codes are stable: ORG001-ORG016, listed in `CODES` and in docs/organs.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import jsonschema
import jsonschema_rs
from pydantic import ValidationError

from colonnade.contracts.findings import Finding, Severity
from colonnade.organs.card import EFFECTS, TAG, OrganCard

__all__ = ["CODES", "validate_card_data"]

_ERROR, _WARNING = Severity.ERROR, Severity.WARNING

CODES: dict[str, tuple[Severity, str]] = {
    "ORG001": (_ERROR, "a card file cannot be read or parsed"),
    "ORG002": (_ERROR, "a field has the wrong type, an unknown name or a malformed value"),
    "ORG003": (_ERROR, "the organ does not have 3-8 tags"),
    "ORG004": (_ERROR, "a tag is not lowercase and hyphenated"),
    "ORG005": (_ERROR, "a function does not have 2-5 tags"),
    "ORG006": (_ERROR, "a function does not have 2-4 examples"),
    "ORG007": (_ERROR, "a description is missing or empty"),
    "ORG008": (_ERROR, "a function does not declare whether it is idempotent"),
    "ORG009": (_ERROR, "a function does not declare its side effects, or names an unknown one"),
    "ORG010": (_ERROR, "an input or output schema is not a valid JSON Schema"),
    "ORG011": (_ERROR, "an example's input does not match the function's input schema"),
    "ORG012": (_ERROR, "organ.json and organ.toml hold different cards"),
    "ORG013": (_ERROR, "two operations of the organ have the same name"),
    "ORG014": (_WARNING, "no entrypoint: the gateway can list the functions but cannot run them"),
    "ORG015": (_WARNING, "a function reaches the network, which the gateway cannot confine in-process"),
    "ORG016": (_ERROR, "the organ has no function"),
}

_TAG = re.compile(TAG)
_RULE_FIELDS = frozenset(
    {"tags", "examples", "description", "idempotent", "side_effects", "input_schema", "output_schema"}
)


def finding(code: str, pointer: str, message: str, fix: str) -> Finding:
    return Finding(code, CODES[code][0], pointer, message, fix)


@dataclass(frozen=True, slots=True)
class _Function:
    pointer: str
    op: str
    data: dict[str, Any]


def validate_card_data(data: Any) -> list[Finding]:
    """All findings for one card's raw data, rules first, then what only the model can tell."""
    if not isinstance(data, dict):
        return [
            finding(
                "ORG002",
                "",
                f"a card is an object, not {type(data).__name__}",
                "write the card as an object with name, version, description, ... (see docs/organs.md)",
            )
        ]
    found: list[Finding] = []
    for rule in RULES:
        found.extend(rule(data))
    found.extend(_model_findings(data))
    return found


def _functions(data: dict[str, Any]) -> Iterator[_Function]:
    for index, function in _items(data.get("functions")):
        if isinstance(function, dict):
            yield _Function(f"/functions/{index}", str(function.get("name", index)), function)
    for sub_index, sub in _items(data.get("sub_organs")):
        if not isinstance(sub, dict):
            continue
        for index, function in _items(sub.get("functions")):
            if isinstance(function, dict):
                op = f"{sub.get('name', sub_index)}.{function.get('name', index)}"
                yield _Function(f"/sub_organs/{sub_index}/functions/{index}", op, function)


def _items(value: Any) -> list[tuple[int, Any]]:
    return list(enumerate(value)) if isinstance(value, list) else []


def _tag_findings(tags: Any, pointer: str, low: int, high: int, code: str, what: str) -> Iterator[Finding]:
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        yield finding(
            "ORG004", pointer, f"{what}: tags must be a list of strings", 'write tags = ["a-tag", ...]'
        )
        return
    if not low <= len(tags) <= high:
        yield finding(
            code,
            pointer,
            f"{what} has {len(tags)} tag(s); {low}-{high} are expected",
            f"give {what} {low} to {high} tags that name what it is about",
        )
    for index, tag in enumerate(tags):
        if not _TAG.match(tag):
            yield finding(
                "ORG004",
                f"{pointer}/{index}",
                f"{what}: tag {tag!r} is not lowercase and hyphenated",
                f"write it as {_kebab(tag)!r} (a-z, 0-9, single hyphens)",
            )


def _kebab(text: str) -> str:
    return "-".join(re.findall(r"[a-z0-9]+", text.lower())) or "a-tag"


def org003_organ_tags(data: dict[str, Any]) -> Iterator[Finding]:
    if "tags" in data:
        yield from _tag_findings(data["tags"], "/tags", 3, 8, "ORG003", "the organ")
    else:
        yield finding(
            "ORG003", "/tags", "the organ has no tags", 'add 3 to 8 tags, e.g. tags = ["storage", ...]'
        )


def org004_sub_organ_tags(data: dict[str, Any]) -> Iterator[Finding]:
    for index, sub in _items(data.get("sub_organs")):
        if isinstance(sub, dict) and "tags" in sub:
            yield from _tag_findings(
                sub["tags"],
                f"/sub_organs/{index}/tags",
                0,
                8,
                "ORG004",
                f"sub-organ '{sub.get('name', index)}'",
            )


def org005_function_tags(data: dict[str, Any]) -> Iterator[Finding]:
    for function in _functions(data):
        what = f"function '{function.op}'"
        if "tags" not in function.data:
            yield finding(
                "ORG005",
                f"{function.pointer}/tags",
                f"{what} has no tags",
                "add 2 to 5 tags (the decorator's tags=[...])",
            )
        else:
            yield from _tag_findings(function.data["tags"], f"{function.pointer}/tags", 2, 5, "ORG005", what)


def org006_examples(data: dict[str, Any]) -> Iterator[Finding]:
    for function in _functions(data):
        examples = function.data.get("examples")
        count = len(examples) if isinstance(examples, list) else 0
        if not 2 <= count <= 4:
            yield finding(
                "ORG006",
                f"{function.pointer}/examples",
                f"function '{function.op}' has {count} example(s); 2-4 are expected",
                "add synthetic examples {input, output} that show typical and edge uses",
            )


def org007_descriptions(data: dict[str, Any]) -> Iterator[Finding]:
    places: list[tuple[str, Any, str]] = [("", data, "the organ")]
    places += [
        (f"/sub_organs/{i}", s, f"sub-organ '{s.get('name', i)}'")
        for i, s in _items(data.get("sub_organs"))
        if isinstance(s, dict)
    ]
    places += [(f.pointer, f.data, f"function '{f.op}'") for f in _functions(data)]
    for pointer, where, what in places:
        text = where.get("description")
        if not isinstance(text, str) or not text.strip():
            yield finding(
                "ORG007",
                f"{pointer}/description",
                f"{what} has no description",
                "say what it does and when to use it (a function's docstring becomes its description)",
            )


def org008_idempotent(data: dict[str, Any]) -> Iterator[Finding]:
    for function in _functions(data):
        if not isinstance(function.data.get("idempotent"), bool):
            yield finding(
                "ORG008",
                f"{function.pointer}/idempotent",
                f"function '{function.op}' does not declare idempotent (true or false)",
                "declare idempotent=True when repeating a call with the same input changes nothing more",
            )


def org009_side_effects(data: dict[str, Any]) -> Iterator[Finding]:
    for function in _functions(data):
        effects = function.data.get("side_effects")
        pointer = f"{function.pointer}/side_effects"
        if not isinstance(effects, list):
            yield finding(
                "ORG009",
                pointer,
                f"function '{function.op}' does not declare its side effects",
                f"declare side_effects as a list of {', '.join(EFFECTS)}; [] for a pure function",
            )
            continue
        for index, effect in enumerate(effects):
            if effect not in EFFECTS:
                yield finding(
                    "ORG009",
                    f"{pointer}/{index}",
                    f"unknown side effect {effect!r}",
                    f"use one of {', '.join(EFFECTS)}",
                )


def org010_schemas(data: dict[str, Any]) -> Iterator[Finding]:
    for function in _functions(data):
        for field in ("input_schema", "output_schema"):
            if field not in function.data and field == "output_schema":
                continue
            problem = schema_problem(function.data.get(field), need_object=field == "input_schema")
            if problem is not None:
                yield finding(
                    "ORG010",
                    f"{function.pointer}/{field}",
                    f"function '{function.op}': {field} is not a valid JSON Schema: {problem}",
                    "fix the schema (Draft 2020-12), or derive it from type hints with @organ.function",
                )


def schema_problem(schema: Any, *, need_object: bool) -> str | None:
    """Why `schema` is not a usable JSON Schema (Draft 2020-12), or None when it is."""
    if not isinstance(schema, dict):
        return f"expected an object, got {type(schema).__name__}"
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
        jsonschema_rs.validator_for(schema)
    except jsonschema.SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path)
        return f"{exc.message}" + (f" (at {where})" if where else "")
    except (ValueError, jsonschema_rs.ValidationError) as exc:
        return str(exc).splitlines()[0]
    if need_object and schema.get("type") != "object":
        return "an input schema must describe an object (type: object), since inputs are named arguments"
    return None


def org011_example_inputs(data: dict[str, Any]) -> Iterator[Finding]:
    for function in _functions(data):
        schema = function.data.get("input_schema")
        if not isinstance(schema, dict) or schema_problem(schema, need_object=True) is not None:
            continue
        validator = jsonschema_rs.validator_for(schema)
        for index, example in _items(function.data.get("examples")):
            given = example.get("input") if isinstance(example, dict) else None
            if not isinstance(given, dict):
                yield finding(
                    "ORG011",
                    f"{function.pointer}/examples/{index}/input",
                    f"function '{function.op}': example {index} has no input object",
                    "give the example an input object with the function's arguments",
                )
                continue
            errors = list(validator.iter_errors(given))
            if errors:
                yield finding(
                    "ORG011",
                    f"{function.pointer}/examples/{index}/input",
                    f"function '{function.op}': example {index} does not match the input schema: "
                    f"{errors[0].message}",
                    "correct the example's input (or the schema)",
                )


def org013_unique_operations(data: dict[str, Any]) -> Iterator[Finding]:
    seen: dict[str, str] = {}
    names = [
        (f"/functions/{i}/name", f.get("name"))
        for i, f in _items(data.get("functions"))
        if isinstance(f, dict)
    ]
    names += [
        (f"/sub_organs/{i}/name", s.get("name"))
        for i, s in _items(data.get("sub_organs"))
        if isinstance(s, dict)
    ]
    for function in _functions(data):
        if "." in function.op:
            names.append((f"{function.pointer}/name", function.op))
    for pointer, name in names:
        if not isinstance(name, str):
            continue
        if name in seen:
            yield finding(
                "ORG013",
                pointer,
                f"the name {name!r} is used twice (first at {seen[name]})",
                "rename one: a function and a sub-organ of one organ need distinct names",
            )
        else:
            seen[name] = pointer


def org014_entrypoint(data: dict[str, Any]) -> Iterator[Finding]:
    if not data.get("entrypoint"):
        yield finding(
            "ORG014",
            "/entrypoint",
            "the card names no entrypoint (module:attribute)",
            "export the card with `colonnade cards export MODULE`, which records the entrypoint",
        )


def org015_network(data: dict[str, Any]) -> Iterator[Finding]:
    for function in _functions(data):
        effects = function.data.get("side_effects")
        if isinstance(effects, list) and "network" in effects:
            yield finding(
                "ORG015",
                f"{function.pointer}/side_effects",
                f"function '{function.op}' reaches the network; in-process the gateway cannot confine "
                "it, so a call that gives net_allowlist is refused",
                "run the organ as a sidecar (colonnade organ serve) if its reach must be confined",
            )


def org016_has_functions(data: dict[str, Any]) -> Iterator[Finding]:
    if not any(True for _ in _functions(data)):
        yield finding(
            "ORG016",
            "/functions",
            "the organ has no function",
            "register at least one function (@organ.function) or sub-organ",
        )


def _model_findings(data: dict[str, Any]) -> Iterator[Finding]:
    try:
        OrganCard.model_validate(data)
    except ValidationError as exc:
        for error in exc.errors():
            loc = [str(part) for part in error["loc"]]
            if _ruled(loc):
                continue
            pointer = "".join(f"/{part}" for part in loc)
            yield finding(
                "ORG002",
                pointer,
                f"{error['msg']}" + _given(error),
                "correct the field as the message says (see the card reference in docs/organs.md)",
            )


def _ruled(loc: list[str]) -> bool:
    """Errors the rules already report (tags, examples, descriptions, effects, schemas)."""
    return any(part in _RULE_FIELDS for part in loc)


def _given(error: Any) -> str:
    if error["type"] in ("missing", "extra_forbidden") or "input" not in error:
        return ""
    shown = repr(error["input"])
    return f" (got {shown[:80]})"


RULES: tuple[Callable[[dict[str, Any]], Iterator[Finding]], ...] = (
    org003_organ_tags,
    org004_sub_organ_tags,
    org005_function_tags,
    org006_examples,
    org007_descriptions,
    org008_idempotent,
    org009_side_effects,
    org010_schemas,
    org011_example_inputs,
    org013_unique_operations,
    org014_entrypoint,
    org015_network,
    org016_has_functions,
)
