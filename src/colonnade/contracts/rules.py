"""The validator's rules: one function per public code (UAC001..UAC023), each safe on raw data.

Every rule takes the same `Subject` (the JSON-shaped document and what rules share) and yields
findings; `RULES` lists them and nothing else decides what runs. Rules read the raw data
defensively so that a document that fails the schema still gets every semantic finding that
can be computed: authors fix everything in one pass instead of one error per run.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any
from urllib.parse import urlsplit

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError
from referencing import Registry
from referencing.exceptions import Unresolvable

from colonnade.contracts.endpoint_schema_checks import EndpointRef, binding_problems, schema_problems
from colonnade.contracts.findings import Finding, Severity
from colonnade.contracts.model import derive_input_schema
from colonnade.contracts.output_shape import OutputShape, output_shape
from colonnade.contracts.schema_keywords import KEYWORDS, KeywordProblem, keyword_problems
from colonnade.contracts.secrets import find_secrets
from colonnade.contracts.violations import (
    describe_value,
    dotted,
    explain_all,
    pointer_of,
    schema_violations,
    shorten,
)

__all__ = [
    "CODES",
    "RULES",
    "Rule",
    "Subject",
    "raw_tool_names",
]

CODES: dict[str, tuple[Severity, str]] = {
    "UAC001": (Severity.ERROR, "document does not match the contract schema"),
    "UAC002": (Severity.ERROR, "an llm block is present but malformed"),
    "UAC003": (Severity.ERROR, "side_effects: destructive without requires_human_approval: true"),
    "UAC004": (Severity.WARNING, "an endpoint exposed as an MCP tool has no llm block"),
    "UAC005": (Severity.WARNING, "HTTP method conflicts with side_effects"),
    "UAC006": (Severity.WARNING, "summary longer than 160 characters"),
    "UAC007": (Severity.WARNING, "intent longer than 360 characters"),
    "UAC008": (Severity.ERROR, "tool name not unique within the tenant/API namespace"),
    "UAC009": (Severity.ERROR, "tool name has characters outside A-Za-z0-9_.- or is longer than 64"),
    "UAC010": (Severity.ERROR, "an example input does not validate against the endpoint's input schema"),
    "UAC011": (Severity.WARNING, "more than two examples"),
    "UAC012": (Severity.ERROR, "an example contains what looks like a secret or real personal data"),
    "UAC013": (Severity.ERROR, "the same path + method appears twice in one contract"),
    "UAC014": (Severity.WARNING, "safe_for_agents: true on a destructive operation"),
    "UAC015": (Severity.ERROR, "a published contract has no endpoints"),
    "UAC016": (Severity.ERROR, "runtime.two_phase names an operation that is not in the contract"),
    "UAC017": (Severity.WARNING, "an llm block has no examples"),
    "UAC018": (Severity.ERROR, "summary or intent is empty or blank"),
    "UAC019": (Severity.ERROR, "a keyword of an input or output schema has a null value"),
    "UAC020": (Severity.WARNING, "an input or output schema has a keyword JSON Schema 2020-12 does not know"),
    "UAC021": (Severity.WARNING, "an output schema admits objects and other values alike"),
    "UAC022": (Severity.WARNING, "a published contract still lists needs_review items"),
    "UAC023": (Severity.ERROR, "backend.base_url carries credentials (user:password@)"),
}

SUMMARY_LIMIT = 160
INTENT_LIMIT = 360
TOOL_NAME_LIMIT = 64
_TOOL_NAME_CHARS = re.compile(r"[A-Za-z0-9_.-]")
_WRITES = frozenset({"write", "destructive"})
_READS = frozenset({"none", "read"})
_METHOD_CONFLICTS = {
    "GET": _WRITES,
    "HEAD": _WRITES,
    "DELETE": _READS,
    "POST": _READS,
    "PUT": _READS,
    "PATCH": _READS,
}


def _finding(code: str, pointer: str, message: str, fix: str) -> Finding:
    return Finding(code, CODES[code][0], pointer, message, fix)


# --- the document under validation ------------------------------------------------------------


@dataclass(frozen=True)
class RawEndpoint:
    """One entry of `endpoints`, read without trusting its shape."""

    index: int
    data: dict[str, Any]

    @property
    def pointer(self) -> str:
        return f"/endpoints/{self.index}"

    @property
    def path(self) -> str | None:
        path = self.data.get("path")
        return path if isinstance(path, str) else None

    @property
    def methods(self) -> list[tuple[int, str]]:
        """(position, upper-cased method) for each method that is at least a string."""
        methods = self.data.get("methods")
        if not isinstance(methods, list):
            return []
        return [(i, m.upper()) for i, m in enumerate(methods) if isinstance(m, str)]

    @property
    def llm(self) -> dict[str, Any] | None:
        llm = self.data.get("llm")
        return llm if isinstance(llm, dict) else None

    def llm_pointer(self, field: str) -> str:
        return f"{self.pointer}/llm/{field}"

    def tokens(self, *more: object) -> list[object]:
        return ["endpoints", self.index, *more]

    @property
    def ref(self) -> EndpointRef:
        methods = tuple(m for _, m in self.methods)
        return EndpointRef(self.pointer, self.path, methods, self.label, self.data.get("body_media_type"))

    @property
    def label(self) -> str:
        """How the endpoint reads in a message: `endpoint 2 (GET, POST /customers)`."""
        methods = ", ".join(m for _, m in self.methods)
        route = " ".join(part for part in (methods, self.path or "") if part)
        return f"endpoint {self.index} ({route})" if route else f"endpoint {self.index}"

    @property
    def input_schema(self) -> Any:
        return self.data.get("input_schema")

    def effective_input_schema(self) -> dict[str, Any] | None:
        """The declared input schema, or the one derived from `{param}`s; None if unknowable."""
        declared = self.input_schema
        if declared is None and self.path is not None:
            return derive_input_schema(self.path)
        return declared if isinstance(declared, dict) else None


class Subject:
    """The JSON-shaped document and the facts several rules share (computed once)."""

    def __init__(self, data: Any, shape_findings: Iterable[Finding] = ()) -> None:
        self.data = data
        self.shape_findings = list(shape_findings)

    @cached_property
    def schema_findings(self) -> list[Finding]:
        """Schema violations, less those at a value already reported as not JSON (one finding each)."""
        reported = {f.path for f in self.shape_findings}
        return [f for f in schema_violations(self.data) if f.path not in reported]

    @cached_property
    def endpoints(self) -> list[RawEndpoint]:
        endpoints = self.data.get("endpoints") if isinstance(self.data, dict) else None
        if not isinstance(endpoints, list):
            return []
        return [RawEndpoint(i, e) for i, e in enumerate(endpoints) if isinstance(e, dict)]

    @cached_property
    def broken_input_schemas(self) -> dict[int, list[Finding]]:
        """Per endpoint index: why its input_schema is not valid JSON Schema (empty when it is)."""
        return {
            ep.index: schema_problems(ep.input_schema, ep.tokens("input_schema")) for ep in self.endpoints
        }


Rule = Callable[[Subject], Iterable[Finding]]


# --- UAC001 / UAC002: the schema ----------------------------------------------------------------


def uac001_schema(subject: Subject) -> Iterator[Finding]:
    """The document's shape: JSON data model, then the published contract schema."""
    yield from subject.shape_findings
    yield from (f for f in subject.schema_findings if f.code == "UAC001")


def uac001_input_schemas(subject: Subject) -> Iterator[Finding]:
    """Input/output schemas are valid JSON Schema 2020-12 and bind every argument to the request.

    A keyword whose value is null is UAC019's finding, with a fix that says more: not repeated here.
    """
    for endpoint in subject.endpoints:
        nulls = {pointer_of(p.tokens) for p in _keyword_problems(endpoint) if p.kind == "null"}
        broken = subject.broken_input_schemas[endpoint.index]
        yield from (f for f in broken if f.path not in nulls)
        if not broken and isinstance(endpoint.input_schema, dict):
            yield from binding_problems(endpoint.ref, endpoint.input_schema)
        output = schema_problems(endpoint.data.get("output_schema"), endpoint.tokens("output_schema"))
        yield from (f for f in output if f.path not in nulls)


def uac002_llm_block(subject: Subject) -> Iterator[Finding]:
    """Schema violations located inside an endpoint's `llm` block."""
    yield from (f for f in subject.schema_findings if f.code == "UAC002")


# --- UAC003..UAC007, UAC014: the llm block's meaning ------------------------------------------------


def _llm_endpoints(subject: Subject) -> Iterator[tuple[RawEndpoint, dict[str, Any]]]:
    for endpoint in subject.endpoints:
        if endpoint.llm is not None:
            yield endpoint, endpoint.llm


def uac003_destructive_needs_approval(subject: Subject) -> Iterator[Finding]:
    for endpoint, llm in _llm_endpoints(subject):
        approval = llm.get("requires_human_approval")
        if llm.get("side_effects") == "destructive" and approval is not True:
            state = describe_value(approval) if "requires_human_approval" in llm else "missing"
            yield _finding(
                "UAC003",
                endpoint.llm_pointer("requires_human_approval"),
                f"{endpoint.label} is destructive but requires_human_approval is {state}",
                "set `requires_human_approval: true` (or lower side_effects if it cannot destroy data)",
            )


def uac004_tool_without_llm(subject: Subject) -> Iterator[Finding]:
    for endpoint in subject.endpoints:
        if endpoint.data.get("mcp", True) is not False and endpoint.data.get("llm") is None:
            yield _finding(
                "UAC004",
                endpoint.pointer,
                f"{endpoint.label} is exposed as an MCP tool but has no llm block; agents get no summary, "
                "intent or side-effect information",
                "add an `llm` block (summary, intent, tool_name, side_effects, safe_for_agents, "
                "requires_human_approval, examples), or set `mcp: false` to keep it off the tool list",
            )


def uac005_method_vs_side_effects(subject: Subject) -> Iterator[Finding]:
    for endpoint, llm in _llm_endpoints(subject):
        effects = llm.get("side_effects")
        for _, method in endpoint.methods:
            if isinstance(effects, str) and effects in _METHOD_CONFLICTS.get(method, ()):
                yield _finding(
                    "UAC005",
                    endpoint.llm_pointer("side_effects"),
                    f"{endpoint.label}: {method} conflicts with side_effects '{effects}'",
                    _method_fix(method),
                )


def _method_fix(method: str) -> str:
    if method in ("GET", "HEAD"):
        return f"{method} must not change state: use side_effects none or read, or a POST/PUT/PATCH/DELETE"
    if method == "DELETE":
        return "a DELETE changes state: use side_effects write or destructive"
    return f"a {method} usually changes state: use side_effects write or destructive, or GET for reads"


def _too_long(subject: Subject, field: str, limit: int, code: str) -> Iterator[Finding]:
    for endpoint, llm in _llm_endpoints(subject):
        text = llm.get(field)
        if isinstance(text, str) and len(text) > limit:
            yield _finding(
                code,
                endpoint.llm_pointer(field),
                f"{field} of {endpoint.label} is {len(text)} characters; the target is at most {limit}",
                f"shorten it to {limit} characters or fewer",
            )


def uac006_summary_length(subject: Subject) -> Iterator[Finding]:
    return _too_long(subject, "summary", SUMMARY_LIMIT, "UAC006")


def uac007_intent_length(subject: Subject) -> Iterator[Finding]:
    return _too_long(subject, "intent", INTENT_LIMIT, "UAC007")


def uac014_destructive_safe_for_agents(subject: Subject) -> Iterator[Finding]:
    for endpoint, llm in _llm_endpoints(subject):
        if llm.get("side_effects") == "destructive" and llm.get("safe_for_agents") is True:
            yield _finding(
                "UAC014",
                endpoint.llm_pointer("safe_for_agents"),
                f"{endpoint.label} is destructive yet marked safe_for_agents: true",
                "set `safe_for_agents: false` unless an unsupervised agent may really destroy this data",
            )


# --- UAC008, UAC009: tool names ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RawToolName:
    """The tool name one (endpoint, method) gets, the name it derives from, and that name's field."""

    name: str
    base: str
    method: str
    endpoint: RawEndpoint
    pointer: str


def raw_tool_names(subject: Subject) -> list[RawToolName]:
    """Mirror of `Operation.tool_name` on raw data (a test keeps the two in step)."""
    names: list[RawToolName] = []
    for endpoint in subject.endpoints:
        if endpoint.data.get("llm") is not None:
            llm = endpoint.llm or {}
            base, pointer = llm.get("tool_name"), endpoint.llm_pointer("tool_name")
        else:
            base, pointer = endpoint.data.get("operation_id"), f"{endpoint.pointer}/operation_id"
        if not isinstance(base, str):
            continue
        methods = endpoint.methods
        for _, method in methods:
            name = f"{base}_{method.lower()}" if len(methods) > 1 else base
            names.append(RawToolName(name, base, method, endpoint, pointer))
    return names


def uac008_unique_tool_names(subject: Subject) -> Iterator[Finding]:
    first: dict[str, RawToolName] = {}
    for tool in raw_tool_names(subject):
        earlier = first.setdefault(tool.name, tool)
        if earlier is tool:
            continue
        yield _finding(
            "UAC008",
            tool.pointer,
            f"tool name '{tool.name}' of {tool.method} {tool.endpoint.label} is already used by "
            f"{earlier.method} {earlier.endpoint.label}",
            "give one of them a distinct llm.tool_name (tool names are unique per tenant and API)",
        )


def uac009_tool_name_format(subject: Subject) -> Iterator[Finding]:
    by_field: dict[str, list[RawToolName]] = {}
    for tool in raw_tool_names(subject):
        by_field.setdefault(tool.pointer, []).append(tool)
    for pointer, tools in by_field.items():
        base, endpoint = tools[0].base, tools[0].endpoint
        problem = _tool_name_problem(base)
        longest = max(tools, key=lambda tool: len(tool.name))
        if problem is None and len(longest.name) > TOOL_NAME_LIMIT:
            base = longest.name
            problem = (
                f"(derived for {longest.method}: the endpoint serves several methods) is {len(base)} "
                f"characters long; the limit is {TOOL_NAME_LIMIT}"
            )
        if problem is not None:
            yield _finding(
                "UAC009",
                pointer,
                f"tool name '{base}' of {endpoint.label} {problem}",
                f"use 1-{TOOL_NAME_LIMIT} characters of A-Za-z0-9_.- (e.g. 'get_customer')",
            )


def _tool_name_problem(name: str) -> str | None:
    if not name:
        return "is empty"
    bad = sorted({c for c in name if not _TOOL_NAME_CHARS.fullmatch(c)})
    if bad:
        return f"contains {', '.join(repr(c) for c in bad)}, outside A-Za-z0-9_.-"
    if len(name) > TOOL_NAME_LIMIT:
        return f"is {len(name)} characters long; the limit is {TOOL_NAME_LIMIT}"
    return None


# --- UAC010..UAC012: examples ------------------------------------------------------------------


def _examples(subject: Subject) -> Iterator[tuple[RawEndpoint, int, Any]]:
    for endpoint, llm in _llm_endpoints(subject):
        examples = llm.get("examples")
        if isinstance(examples, list):
            for index, example in enumerate(examples):
                yield endpoint, index, example


def uac010_example_inputs(subject: Subject) -> Iterator[Finding]:
    for endpoint, index, example in _examples(subject):
        schema = endpoint.effective_input_schema()
        if schema is None or subject.broken_input_schemas[endpoint.index]:
            continue
        data = example.get("input") if isinstance(example, dict) else None
        if not isinstance(data, dict):
            continue
        base = endpoint.tokens("llm", "examples", index, "input")
        yield from _input_violations(endpoint, schema, data, base)


def _input_violations(
    endpoint: RawEndpoint, schema: dict[str, Any], data: Any, base: list[object]
) -> Iterator[Finding]:
    validator = Draft202012Validator(
        schema, registry=Registry(), format_checker=Draft202012Validator.FORMAT_CHECKER
    )
    fix = f"make the example match input_schema of {endpoint.label}"
    try:
        errors: list[ValidationError] = list(validator.iter_errors(data))
    except Unresolvable as exc:
        yield _finding(
            "UAC001",
            f"{endpoint.pointer}/input_schema",
            f"input_schema of {endpoint.label} has a $ref that cannot be resolved: {shorten(str(exc))}",
            "use only references inside the schema itself (e.g. #/$defs/Customer)",
        )
        return
    except RecursionError:  # e.g. {"$ref": "#"} or {"$ref": ""}: the schema is its own definition
        yield _finding(
            "UAC001",
            f"{endpoint.pointer}/input_schema",
            f"input_schema of {endpoint.label} refers to itself without end (a $ref that leads back to "
            "where it stands), so no input can be checked against it",
            "make every $ref point at a definition that says something (e.g. #/$defs/Customer)",
        )
        return
    for tokens, message, hint in explain_all(errors, base, fix):
        yield _finding("UAC010", pointer_of(tokens), f"example input does not fit: {message}", hint)


def uac011_example_count(subject: Subject) -> Iterator[Finding]:
    for endpoint, llm in _llm_endpoints(subject):
        examples = llm.get("examples")
        if isinstance(examples, list) and len(examples) > 2:
            yield _finding(
                "UAC011",
                endpoint.llm_pointer("examples"),
                f"{endpoint.label} has {len(examples)} examples; one or two keep the tool description short",
                "keep the one or two most telling examples",
            )


def uac012_synthetic_examples(subject: Subject) -> Iterator[Finding]:
    for endpoint, index, example in _examples(subject):
        for where, what, text in _strings(example, endpoint.tokens("llm", "examples", index)):
            for match in find_secrets(text):
                yield _finding(
                    "UAC012",
                    pointer_of(where),
                    f"{dotted(where)} ({what}) contains {match.kind}: {match.redacted}",
                    "replace it with synthetic data: example.com addresses, placeholder tokens such as "
                    "'<token>', made-up identifiers; never real credentials or card-like numbers",
                )


def _strings(value: Any, tokens: list[object]) -> Iterator[tuple[list[object], str, str]]:
    """(location, 'key' or 'value', text) for every string and integer under `value`."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield [*tokens, key], "key", str(key)
            yield from _strings(item, [*tokens, key])
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _strings(item, [*tokens, i])
    elif isinstance(value, str):
        yield tokens, "value", value
    elif isinstance(value, int) and not isinstance(value, bool):
        yield tokens, "value", str(value)


# --- UAC013, UAC015: the contract as a whole ----------------------------------------------------


def uac013_unique_routes(subject: Subject) -> Iterator[Finding]:
    first: dict[tuple[str, str], RawEndpoint] = {}
    for endpoint in subject.endpoints:
        if endpoint.path is None:
            continue
        route = re.sub(r"\{[^}]*\}", "{}", endpoint.path)
        for position, method in endpoint.methods:
            earlier = first.setdefault((method, route), endpoint)
            if earlier is endpoint and _first_position(endpoint, method) == position:
                continue
            where = "twice in the same endpoint" if earlier is endpoint else f"already in {earlier.label}"
            yield _finding(
                "UAC013",
                f"{endpoint.pointer}/methods/{position}",
                f"{method} {endpoint.path} of {endpoint.label} is declared {where}",
                "declare each path + method once (path parameter names do not make routes different)",
            )


def _first_position(endpoint: RawEndpoint, method: str) -> int:
    return next(position for position, m in endpoint.methods if m == method)


def uac015_published_has_endpoints(subject: Subject) -> Iterator[Finding]:
    data = subject.data if isinstance(subject.data, dict) else {}
    if data.get("status") == "published" and data.get("endpoints") == []:
        yield _finding(
            "UAC015",
            "/endpoints",
            "the contract is published but has no endpoints",
            "add at least one endpoint, or set `status: draft` until it has some",
        )


def uac016_two_phase_operations(subject: Subject) -> Iterator[Finding]:
    """Commit and compensate operations must be other operations of the same contract."""
    known = {
        e.data.get("operation_id") for e in subject.endpoints if isinstance(e.data.get("operation_id"), str)
    }
    for endpoint in subject.endpoints:
        runtime = endpoint.data.get("runtime")
        spec = runtime.get("two_phase") if isinstance(runtime, dict) else None
        if not isinstance(spec, dict):
            continue
        for field in ("commit_operation", "compensate_operation"):
            name = spec.get(field)
            if not isinstance(name, str):
                continue  # a missing or mistyped field is UAC001's finding
            if name not in known or name == endpoint.data.get("operation_id"):
                what = (
                    "is this operation itself" if name in known else "is not an operation_id of this contract"
                )
                yield _finding(
                    "UAC016",
                    f"{endpoint.pointer}/runtime/two_phase/{field}",
                    f"two_phase.{field} {name!r} {what}",
                    f"name another operation of this contract; known: {', '.join(sorted(map(str, known)))}",
                )


# --- UAC017, UAC018: an llm block that says nothing ---------------------------------------------


def uac017_no_examples(subject: Subject) -> Iterator[Finding]:
    for endpoint, llm in _llm_endpoints(subject):
        if llm.get("examples") == []:
            yield _finding(
                "UAC017",
                endpoint.llm_pointer("examples"),
                f"{endpoint.label} has no examples; agents and `colonnade smoke` get nothing to learn from "
                "or to prove the tool with",
                "add one or two synthetic examples: {input: {...}, expected_output_contains: {field: value}}",
            )


def uac018_blank_summary_or_intent(subject: Subject) -> Iterator[Finding]:
    for endpoint, llm in _llm_endpoints(subject):
        for field, fix in (
            ("summary", "say in one sentence what the operation does (at most 160 characters)"),
            ("intent", "say when an agent should use it, and when not (at most 360 characters)"),
        ):
            text = llm.get(field)
            if isinstance(text, str) and not text.strip():
                state = "empty" if not text else "blank (only white space)"
                yield _finding(
                    "UAC018",
                    endpoint.llm_pointer(field),
                    f"{field} of {endpoint.label} is {state}; agents choose tools by it",
                    fix,
                )


# --- UAC019, UAC020: keywords of the endpoint schemas ----------------------------------------------


def _keyword_problems(endpoint: RawEndpoint) -> Iterator[KeywordProblem]:
    for field in ("input_schema", "output_schema"):
        yield from keyword_problems(endpoint.data.get(field), endpoint.tokens(field))


def uac019_null_schema_keywords(subject: Subject) -> Iterator[Finding]:
    for endpoint in subject.endpoints:
        for problem in _keyword_problems(endpoint):
            if problem.kind != "null":
                continue
            where = f"{dotted(problem.tokens[2:-1])} of {endpoint.label}"
            if problem.keyword in KEYWORDS:
                message = f"`{problem.keyword}` in {where} is null"
                fix = f"give `{problem.keyword}` a value, or remove it"
            else:
                message = (
                    f"{where} has a key {problem.keyword!r} with no value; JSON Schema ignores it, yet "
                    "every client receives it"
                )
                fix = _cut_text_fix(problem)
            yield _finding("UAC019", pointer_of(problem.tokens), message, fix)


def _cut_text_fix(problem: KeywordProblem) -> str:
    """A comma inside a YAML `{...}` ends a value: quote the whole text again."""
    if problem.after is None:
        return "remove it, or quote the text it was cut from if a comma in a YAML {...} mapping split it"
    name, text = problem.after
    whole = json.dumps(f"{text}, {problem.keyword}", ensure_ascii=False)
    return f"quote the whole text (a comma inside a YAML {{...}} ends a value): {name}: {whole}"


def uac020_unknown_schema_keywords(subject: Subject) -> Iterator[Finding]:
    for endpoint in subject.endpoints:
        for problem in _keyword_problems(endpoint):
            if problem.kind != "unknown":
                continue
            close = difflib.get_close_matches(problem.keyword, sorted(KEYWORDS), n=1, cutoff=0.75)
            spelling = f" (did you mean {close[0]!r}?)" if close else ""
            yield _finding(
                "UAC020",
                pointer_of(problem.tokens),
                f"{problem.keyword!r} in {dotted(problem.tokens[2:-1])} of {endpoint.label} is not a JSON "
                f"Schema 2020-12 keyword{spelling}; validators ignore it",
                "fix its spelling, remove it, or name it x-... to mark it as an extension",
            )


# --- UAC021: the result as MCP clients see it ---------------------------------------------------


def uac021_output_shape(subject: Subject) -> Iterator[Finding]:
    """MCP results are objects: an output schema must say whether the result is one (see output_shape)."""
    for endpoint in subject.endpoints:
        schema = endpoint.data.get("output_schema")
        if not isinstance(schema, dict) or schema_problems(schema, endpoint.tokens("output_schema")):
            continue
        if output_shape(schema) is OutputShape.MIXED:
            yield _finding(
                "UAC021",
                f"{endpoint.pointer}/output_schema",
                f"output_schema of {endpoint.label} admits objects and other values alike, so MCP clients "
                "cannot be told the result's shape: the tool is listed without an output schema",
                "give it one kind: `type: object` for an object (also when only `properties` say so), or "
                'a non-object type (an array or a scalar reaches MCP clients as {"result": ...})',
            )


def uac022_published_with_review_items(subject: Subject) -> Iterator[Finding]:
    data = subject.data if isinstance(subject.data, dict) else {}
    items = data.get("needs_review")
    if data.get("status") == "published" and isinstance(items, list) and items:
        yield _finding(
            "UAC022",
            "/needs_review",
            f"the contract is published but still lists {len(items)} needs_review item(s), e.g. "
            f"{shorten(str(items[0]))}",
            "do what each item asks and remove it (drop `needs_review` when it is empty), or set "
            "`status: draft` until then",
        )


# --- UAC023: the backend -------------------------------------------------------------------------


def uac023_no_credentials_in_base_url(subject: Subject) -> Iterator[Finding]:
    """A URL's `user:password@` would be stored, listed and logged with the contract, in clear."""
    backend = subject.data.get("backend") if isinstance(subject.data, dict) else None
    url = backend.get("base_url") if isinstance(backend, dict) else None
    if not isinstance(url, str):
        return  # a missing or mistyped base_url is UAC001's finding
    try:
        netloc = urlsplit(url).netloc
    except ValueError:
        return  # not a URL at all: UAC001's pattern reports it
    userinfo, at, host = netloc.rpartition("@")
    if not at:
        return
    what = "a user name and password" if ":" in userinfo else "a user name or token"
    yield _finding(
        "UAC023",
        "/backend/base_url",
        f"backend.base_url carries {what} before '@' (…@{host}); the contract would hold it in clear",
        "remove the credentials from the URL and reference a secret in backend.auth instead, e.g. "
        "`auth: {type: basic, secret: CRM_CREDENTIALS}` with the value `user:password` in the "
        "environment variable COLONNADE_SECRET_CRM_CREDENTIALS",
    )


RULES: tuple[Rule, ...] = (
    uac001_schema,
    uac001_input_schemas,
    uac002_llm_block,
    uac003_destructive_needs_approval,
    uac004_tool_without_llm,
    uac005_method_vs_side_effects,
    uac006_summary_length,
    uac007_intent_length,
    uac008_unique_tool_names,
    uac009_tool_name_format,
    uac010_example_inputs,
    uac011_example_count,
    uac012_synthetic_examples,
    uac013_unique_routes,
    uac014_destructive_safe_for_agents,
    uac015_published_has_endpoints,
    uac016_two_phase_operations,
    uac017_no_examples,
    uac018_blank_summary_or_intent,
    uac019_null_schema_keywords,
    uac020_unknown_schema_keywords,
    uac021_output_shape,
    uac022_published_with_review_items,
    uac023_no_credentials_in_base_url,
)
