"""Every validator rule (UAC001..UAC023): a document that breaks it and a near miss that passes.

Each document is the valid base fixture with one mutation, so a failure names exactly one rule.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from colonnade.contracts.findings import Finding, Severity
from colonnade.contracts.rules import CODES
from colonnade.contracts.validate import validate_data

BASE_PATH = Path(__file__).resolve().parents[1] / "fixtures" / "contracts" / "valid.yaml"
BASE: dict[str, Any] = yaml.safe_load(BASE_PATH.read_text(encoding="utf-8"))

Doc = dict[str, Any]
Mutation = Callable[[Doc], None]

# The public table of issue 2, copied here on purpose: changing a code's severity must break a test.
PUBLIC_SEVERITIES = {
    "UAC001": "error",
    "UAC002": "error",
    "UAC003": "error",
    "UAC004": "warning",
    "UAC005": "warning",
    "UAC006": "warning",
    "UAC007": "warning",
    "UAC008": "error",
    "UAC009": "error",
    "UAC010": "error",
    "UAC011": "warning",
    "UAC012": "error",
    "UAC013": "error",
    "UAC014": "warning",
    "UAC015": "error",
    "UAC016": "error",  # added with two-phase commit (issue 5), beyond issue 2's table
    "UAC017": "warning",  # issue 12: what a new user and the contract ADR's own example hit
    "UAC018": "error",
    "UAC019": "error",
    "UAC020": "warning",
    "UAC021": "warning",
    "UAC022": "warning",
    "UAC023": "error",  # credentials in backend.base_url (issue 11)
}


def mutated(mutation: Mutation) -> Doc:
    doc = copy.deepcopy(BASE)
    mutation(doc)
    return doc


def ep(doc: Doc, index: int) -> Doc:
    endpoint: Doc = doc["endpoints"][index]
    return endpoint


def llm(doc: Doc, index: int) -> Doc:
    block: Doc = ep(doc, index)["llm"]
    return block


def with_code(findings: list[Finding], code: str) -> list[Finding]:
    return [f for f in findings if f.code == code]


def test_base_document_has_no_findings() -> None:
    assert validate_data(copy.deepcopy(BASE)) == []


def test_codes_and_severities_match_the_public_table() -> None:
    assert {code: severity.value for code, (severity, _) in CODES.items()} == PUBLIC_SEVERITIES


def _set(path: str, value: Any) -> Mutation:
    """Mutation setting a value at a slash path (`endpoints/0/llm/summary`); ints index lists."""

    def apply(doc: Doc) -> None:
        *parents, last = path.split("/")
        target: Any = doc
        for token in parents:
            target = target[int(token)] if isinstance(target, list) else target[token]
        if isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value

    return apply


def _delete(path: str) -> Mutation:
    def apply(doc: Doc) -> None:
        *parents, last = path.split("/")
        target: Any = doc
        for token in parents:
            target = target[int(token)] if isinstance(target, list) else target[token]
        del target[last]

    return apply


def _all(*mutations: Mutation) -> Mutation:
    def apply(doc: Doc) -> None:
        for mutation in mutations:
            mutation(doc)

    return apply


def _add_endpoint(endpoint: Doc) -> Mutation:
    def apply(doc: Doc) -> None:
        doc["endpoints"].append(copy.deepcopy(endpoint))

    return apply


_LLM = {
    "summary": "Do it.",
    "intent": "Use it.",
    "tool_name": "do_it",
    "side_effects": "write",
    "safe_for_agents": True,
    "requires_human_approval": False,
    "examples": [],
}

# (test id, code, mutation, pointer the finding must carry, words the message must contain)
FAILING: list[tuple[str, str, Mutation, str, tuple[str, ...]]] = [
    ("missing-field", "UAC001", _delete("version"), "/version", ("version", "missing")),
    ("wrong-type", "UAC001", _set("version", 1), "/version", ("string", "number 1")),
    ("unknown-field", "UAC001", _set("endpoints/0/sumary", "x"), "/endpoints/0/sumary", ("sumary",)),
    ("bad-enum", "UAC001", _set("status", "live"), "/status", ("live", "draft, published, deprecated")),
    ("bad-pattern", "UAC001", _set("name", "Support Desk"), "/name", ("kebab-case",)),
    ("nullable-wrong-type", "UAC001", _set("backend/auth", "token"), "/backend/auth", ("mapping",)),
    (
        "bad-x-in",
        "UAC001",
        _set("endpoints/0/input_schema/properties/verbose/x-in", "cookie"),
        "/endpoints/0/input_schema/properties/verbose/x-in",
        ("cookie", "path, query, header, body, raw-body"),
    ),
    (
        "path-param-without-property",
        "UAC001",
        _set("endpoints/0/path", "/tickets/{ticket_id}/notes/{note_id}"),
        "/endpoints/0/input_schema/properties",
        ("{note_id}",),
    ),
    (
        "path-param-not-required",
        "UAC001",
        _set("endpoints/0/input_schema/required", []),
        "/endpoints/0/input_schema/required",
        ("{ticket_id}", "required"),
    ),
    (
        "x-in-path-not-in-path",
        "UAC001",
        _set("endpoints/1/input_schema/properties/request_id/x-in", "path"),
        "/endpoints/1/input_schema/properties/request_id/x-in",
        ("{X-Request-Id}",),
    ),
    (
        "input-schema-not-json-schema",
        "UAC001",
        _set("endpoints/1/input_schema/properties/subject/type", "text"),
        "/endpoints/1/input_schema/properties/subject/type",
        ("not a valid JSON Schema",),
    ),
    (
        "input-schema-not-object",
        "UAC001",
        _set("endpoints/1/input_schema/type", "array"),
        "/endpoints/1/input_schema/type",
        ("object",),
    ),
    (
        "llm-missing-field",
        "UAC002",
        _delete("endpoints/0/llm/intent"),
        "/endpoints/0/llm/intent",
        ("intent",),
    ),
    (
        "llm-wrong-type",
        "UAC002",
        _set("endpoints/0/llm/safe_for_agents", "yes"),
        "/endpoints/0/llm/safe_for_agents",
        ("true or false", '"yes"'),
    ),
    (
        "llm-bad-enum",
        "UAC002",
        _set("endpoints/0/llm/side_effects", "delete"),
        "/endpoints/0/llm/side_effects",
        ("none, read, write, destructive",),
    ),
    (
        "llm-not-a-mapping",
        "UAC002",
        _set("endpoints/0/llm", "reads tickets"),
        "/endpoints/0/llm",
        ("mapping",),
    ),
    (
        "llm-unknown-field",
        "UAC002",
        _set("endpoints/0/llm/owner", "me"),
        "/endpoints/0/llm/owner",
        ("owner",),
    ),
    (
        "llm-example-input-not-object",
        "UAC002",
        _set("endpoints/0/llm/examples/0/input", "T-1"),
        "/endpoints/0/llm/examples/0/input",
        ("mapping",),
    ),
    (
        "destructive-without-approval",
        "UAC003",
        _set("endpoints/2/llm/requires_human_approval", False),
        "/endpoints/2/llm/requires_human_approval",
        ("destructive", "false"),
    ),
    ("mcp-tool-without-llm", "UAC004", _delete("endpoints/0/llm"), "/endpoints/0", ("no llm block",)),
    (
        "get-that-writes",
        "UAC005",
        _set("endpoints/0/llm/side_effects", "write"),
        "/endpoints/0/llm/side_effects",
        ("GET", "write"),
    ),
    (
        "delete-that-reads",
        "UAC005",
        _set("endpoints/2/llm/side_effects", "read"),
        "/endpoints/2/llm/side_effects",
        ("DELETE", "read"),
    ),
    (
        "post-that-reads",
        "UAC005",
        _set("endpoints/1/llm/side_effects", "none"),
        "/endpoints/1/llm/side_effects",
        ("POST", "none"),
    ),
    (
        "summary-too-long",
        "UAC006",
        _set("endpoints/0/llm/summary", "s" * 161),
        "/endpoints/0/llm/summary",
        ("161",),
    ),
    (
        "intent-too-long",
        "UAC007",
        _set("endpoints/0/llm/intent", "i" * 361),
        "/endpoints/0/llm/intent",
        ("361",),
    ),
    (
        "duplicate-tool-name",
        "UAC008",
        _set("endpoints/1/llm/tool_name", "get_ticket"),
        "/endpoints/1/llm/tool_name",
        ("get_ticket",),
    ),
    (
        "duplicate-derived-tool-name",
        "UAC008",
        _all(_delete("endpoints/1/llm"), _set("endpoints/1/operation_id", "get_ticket")),
        "/endpoints/1/operation_id",
        ("get_ticket",),
    ),
    (
        "tool-name-bad-chars",
        "UAC009",
        _set("endpoints/0/llm/tool_name", "get ticket!"),
        "/endpoints/0/llm/tool_name",
        ("' '", "'!'"),
    ),
    (
        "tool-name-too-long",
        "UAC009",
        _set("endpoints/0/llm/tool_name", "t" * 65),
        "/endpoints/0/llm/tool_name",
        ("65",),
    ),
    (
        "tool-name-empty",
        "UAC009",
        _set("endpoints/0/llm/tool_name", ""),
        "/endpoints/0/llm/tool_name",
        ("empty",),
    ),
    (
        "derived-tool-name-too-long",
        "UAC009",
        _all(_set("endpoints/1/llm/tool_name", "t" * 62), _set("endpoints/1/methods", ["POST", "PUT"])),
        "/endpoints/1/llm/tool_name",
        ("_post", "PUT", "several methods"),
    ),
    (
        "example-wrong-type",
        "UAC010",
        _set("endpoints/0/llm/examples/0/input/ticket_id", 1001),
        "/endpoints/0/llm/examples/0/input/ticket_id",
        ("string", "1001"),
    ),
    (
        "example-missing-required",
        "UAC010",
        _set("endpoints/1/llm/examples/0/input", {"subject": "Printer"}),
        "/endpoints/1/llm/examples/0/input/requester",
        ("requester",),
    ),
    (
        "example-unknown-argument",
        "UAC010",
        _set("endpoints/0/llm/examples/0/input/colour", "red"),
        "/endpoints/0/llm/examples/0/input/colour",
        ("colour",),
    ),
    (
        "example-bad-format",
        "UAC010",
        _set("endpoints/1/llm/examples/0/input/requester", "not an address"),
        "/endpoints/1/llm/examples/0/input/requester",
        ("email",),
    ),
    (
        "example-against-derived-schema",
        "UAC010",
        _set("endpoints/2/llm/examples/0/input", {}),
        "/endpoints/2/llm/examples/0/input/ticket_id",
        ("ticket_id",),
    ),
    (
        "three-examples",
        "UAC011",
        _set(
            "endpoints/0/llm/examples", [{"input": {"ticket_id": "T-1"}, "expected_output_contains": "T"}] * 3
        ),
        "/endpoints/0/llm/examples",
        ("3 examples",),
    ),
    (
        "example-real-email",
        "UAC012",
        _set("endpoints/1/llm/examples/0/input/requester", "ada.lovelace@gmail.com"),
        "/endpoints/1/llm/examples/0/input/requester",
        ("e-mail",),
    ),
    (
        "example-secret-in-key",
        "UAC012",
        _set("endpoints/0/llm/examples/0/input/AKIAIOSFODNN7EXAMPLE", "x"),
        "/endpoints/0/llm/examples/0/input/AKIAIOSFODNN7EXAMPLE",
        ("AWS", "key"),
    ),
    (
        "example-secret-in-expected-output",
        "UAC012",
        _set("endpoints/0/llm/examples/0/expected_output_contains", "ghp_" + "a1B2" * 9),
        "/endpoints/0/llm/examples/0/expected_output_contains",
        ("GitHub",),
    ),
    (
        "example-card-number",
        "UAC012",
        _set("endpoints/1/llm/examples/0/input/subject", "Card 4111-1111-1111-1111 declined"),
        "/endpoints/1/llm/examples/0/input/subject",
        ("card",),
    ),
    (
        "example-card-number-as-integer",
        "UAC012",
        _set("endpoints/1/llm/examples/0/input/request_id", 4111111111111111),
        "/endpoints/1/llm/examples/0/input/request_id",
        ("card",),
    ),
    (
        "path-param-without-any-properties",
        "UAC001",
        _all(
            _set("endpoints/2/input_schema", {"type": "object"}), _set("endpoints/2/llm/examples/0/input", {})
        ),
        "/endpoints/2/input_schema/properties",
        ("{ticket_id}",),
    ),
    (
        "duplicate-route",
        "UAC013",
        _add_endpoint(
            {"path": "/tickets/{id}", "methods": ["GET"], "operation_id": "readTicket", "mcp": False}
        ),
        "/endpoints/4/methods/0",
        ("GET /tickets/{id}", "endpoint 0"),
    ),
    (
        "method-twice-in-endpoint",
        "UAC013",
        _set("endpoints/3/methods", ["GET", "GET"]),
        "/endpoints/3/methods/1",
        ("twice",),
    ),
    (
        "destructive-safe-for-agents",
        "UAC014",
        _set("endpoints/2/llm/safe_for_agents", True),
        "/endpoints/2/llm/safe_for_agents",
        ("destructive",),
    ),
    ("published-without-endpoints", "UAC015", _set("endpoints", []), "/endpoints", ("published",)),
    (
        "two-phase-unknown-operation",
        "UAC016",
        _set(
            "endpoints/1/runtime",
            {"two_phase": {"commit_operation": "confirmTicket", "compensate_operation": "deleteTicket"}},
        ),
        "/endpoints/1/runtime/two_phase/commit_operation",
        ("confirmTicket", "not an operation_id"),
    ),
    (
        "no-examples",
        "UAC017",
        _set("endpoints/0/llm/examples", []),
        "/endpoints/0/llm/examples",
        ("no examples",),
    ),
    (
        "blank-summary",
        "UAC018",
        _set("endpoints/0/llm/summary", "  \n"),
        "/endpoints/0/llm/summary",
        ("blank",),
    ),
    ("empty-intent", "UAC018", _set("endpoints/1/llm/intent", ""), "/endpoints/1/llm/intent", ("empty",)),
    (
        "yaml-comma-slip",
        "UAC019",
        _set("endpoints/0/input_schema/properties/ticket_id/e.g. T-1001.", None),
        "/endpoints/0/input_schema/properties/ticket_id/e.g. T-1001.",
        (
            "'e.g. T-1001.'",
            "no value",
            "input_schema.properties.ticket_id of endpoint 0 (GET /tickets/{ticket_id})",
        ),
    ),
    (
        "null-keyword-deep-in-an-output-schema",
        "UAC019",
        _set(
            "endpoints/1/output_schema",
            {"type": "object", "properties": {"id": {"allOf": [{"title": None}]}}},
        ),
        "/endpoints/1/output_schema/properties/id/allOf/0/title",
        ("`title`", "is null"),
    ),
    (
        "misspelt-keyword",
        "UAC020",
        _set("endpoints/1/input_schema/properties/subject/maxLenght", 80),
        "/endpoints/1/input_schema/properties/subject/maxLenght",
        ("'maxLenght'", "did you mean 'maxLength'", "not a JSON Schema 2020-12 keyword"),
    ),
    (
        "object-or-null-output",
        "UAC021",
        _set(
            "endpoints/0/output_schema",
            {"type": ["object", "null"], "properties": {"id": {"type": "string"}}},
        ),
        "/endpoints/0/output_schema",
        ("admits objects and other values", "without an output schema"),
    ),
    (
        "properties-without-a-type",
        "UAC021",
        _set("endpoints/0/output_schema", {"properties": {"id": {"type": "string"}}}),
        "/endpoints/0/output_schema",
        ("admits objects and other values",),
    ),
    (
        "published-with-review-items",
        "UAC022",
        _set("needs_review", ["GET /tickets (listTickets): side_effects 'read' guessed from GET"]),
        "/needs_review",
        ("published", "1 needs_review item", "listTickets"),
    ),
    (
        "password-in-base-url",
        "UAC023",
        _set("backend/base_url", "https://svc:hunter2@support.example.com/api"),
        "/backend/base_url",
        ("user name and password", "support.example.com"),
    ),
    (
        "token-in-base-url",
        "UAC023",
        _set("backend/base_url", "https://tok3n@support.example.com/api"),
        "/backend/base_url",
        ("user name or token",),
    ),
]


@pytest.mark.parametrize(
    ("code", "mutation", "pointer", "words"),
    [pytest.param(code, m, p, w, id=f"{code}-{name}") for name, code, m, p, w in FAILING],
)
def test_rule_reports_the_broken_document(
    code: str, mutation: Mutation, pointer: str, words: tuple[str, ...]
) -> None:
    findings = with_code(validate_data(mutated(mutation)), code)
    assert [f.path for f in findings] == [pointer], findings
    finding = findings[0]
    assert finding.severity is Severity(PUBLIC_SEVERITIES[code])
    for word in words:
        assert word in finding.message, finding.message
    assert finding.fix.strip()


# (test id, code, mutation): a near miss of the rule; the document must stay free of findings.
PASSING: list[tuple[str, str, Mutation]] = [
    ("optional-fields-absent", "UAC001", _all(_delete("classification"), _delete("backend/auth"))),
    ("nullable-field-null", "UAC001", _set("backend/auth", None)),
    (
        "x-in-raw-body",
        "UAC001",
        _all(
            _set("endpoints/1/input_schema/properties", {"note": {"type": "string", "x-in": "raw-body"}}),
            _set("endpoints/1/input_schema/required", ["note"]),
            _set("endpoints/1/llm/examples/0/input", {"note": "Printer on fire"}),
        ),
    ),
    (
        "path-param-renamed-by-x-name",
        "UAC001",
        _all(
            _set(
                "endpoints/0/input_schema/properties",
                {"tid": {"type": "string", "x-in": "path", "x-name": "ticket_id"}},
            ),
            _set("endpoints/0/input_schema/required", ["tid"]),
            _set("endpoints/0/llm/examples/0/input", {"tid": "T-1"}),
        ),
    ),
    ("llm-absent-and-not-a-tool", "UAC002", _all(_delete("endpoints/0/llm"), _set("endpoints/0/mcp", False))),
    ("destructive-with-approval", "UAC003", _set("endpoints/2/llm/summary", "Delete a ticket.")),
    ("hidden-endpoint-without-llm", "UAC004", _set("endpoints/3/operation_id", "ping")),
    ("post-that-writes", "UAC005", _set("endpoints/1/llm/side_effects", "write")),
    (
        "options-anything",
        "UAC005",
        _all(_set("endpoints/0/methods", ["OPTIONS"]), _set("endpoints/0/llm/side_effects", "write")),
    ),
    ("summary-at-limit", "UAC006", _set("endpoints/0/llm/summary", "s" * 160)),
    ("intent-at-limit", "UAC007", _set("endpoints/0/llm/intent", "i" * 360)),
    (
        "multi-method-suffixes-keep-names-apart",
        "UAC008",
        _all(_set("endpoints/1/methods", ["POST", "PUT"]), _set("endpoints/1/llm/tool_name", "save_ticket")),
    ),
    ("tool-name-at-limit", "UAC009", _set("endpoints/0/llm/tool_name", "tickets.v2-" + "x" * 53)),
    (
        "example-valid-against-derived-schema",
        "UAC010",
        _set("endpoints/2/llm/examples/0/input/ticket_id", "T-7"),
    ),
    (
        "two-examples",
        "UAC011",
        _set(
            "endpoints/0/llm/examples", [{"input": {"ticket_id": "T-1"}, "expected_output_contains": "T"}] * 2
        ),
    ),
    (
        "synthetic-example-data",
        "UAC012",
        _set(
            "endpoints/1/llm/examples/0/input",
            {
                "subject": "Call bob@sub.example.org or ops@desk.test; order 1234-5678-9012-3456 is no card; "
                "created 1717171717171; see https://user:<password>@api.example.com; sk-not-a-key-at-all",
                "requester": "ada@example.com",
            },
        ),
    ),
    ("same-path-other-method", "UAC013", _set("endpoints/2/operation_id", "removeTicket")),
    ("destructive-not-safe", "UAC014", _set("endpoints/2/llm/safe_for_agents", False)),
    ("draft-without-endpoints", "UAC015", _all(_set("status", "draft"), _set("endpoints", []))),
    (
        "one-example",
        "UAC017",
        _set("endpoints/0/llm/examples", [{"input": {"ticket_id": "T-1"}, "expected_output_contains": {}}]),
    ),
    ("summary-padded-with-space", "UAC018", _set("endpoints/0/llm/summary", "  Read one ticket.  ")),
    (
        "null-as-data-not-as-keyword",
        "UAC019",
        _set(
            "endpoints/1/output_schema",
            {
                "type": "object",
                "properties": {"closed_on": {"type": ["string", "null"], "default": None, "const": None}},
                "examples": [{"closed_on": None}],
            },
        ),
    ),
    (
        "array-output-is-wrapped-not-warned",
        "UAC021",
        _set(
            "endpoints/0/output_schema",
            {"type": "array", "items": {"$ref": "#/$defs/Ticket"}, "$defs": {"Ticket": {"type": "object"}}},
        ),
    ),
    ("draft-with-review-items", "UAC022", _all(_set("status", "draft"), _set("needs_review", ["check it"]))),
    ("published-with-an-empty-review-list", "UAC022", _set("needs_review", [])),
    (
        "object-by-reference",
        "UAC021",
        _set("endpoints/0/output_schema", {"$ref": "#/$defs/T", "$defs": {"T": {"type": "object"}}}),
    ),
    (
        "extensions-and-property-names-are-not-keywords",
        "UAC020",
        _set(
            "endpoints/1/input_schema/properties/maxLenght",
            {"type": "integer", "x-internal": True, "enum": [{"descripton": 1}]},
        ),
    ),
    (
        "two-phase-known-operations",
        "UAC016",
        _set(
            "endpoints/1/runtime",
            {"two_phase": {"commit_operation": "getTicket", "compensate_operation": "deleteTicket"}},
        ),
    ),
    ("at-sign-in-path-not-host", "UAC023", _set("backend/base_url", "https://support.example.com/@team/api")),
]


@pytest.mark.parametrize(
    ("code", "mutation"),
    [pytest.param(code, m, id=f"{code}-{name}") for name, code, m in PASSING],
)
def test_rule_accepts_the_near_miss(code: str, mutation: Mutation) -> None:
    findings = validate_data(mutated(mutation))
    assert with_code(findings, code) == []
    assert findings == []


def test_every_rule_has_a_failing_and_a_passing_case() -> None:
    assert {code for _, code, *_ in FAILING} == set(PUBLIC_SEVERITIES)
    assert {code for _, code, _ in PASSING} == set(PUBLIC_SEVERITIES)


def test_credentials_in_base_url_are_never_echoed() -> None:
    doc = mutated(_set("backend/base_url", "https://svc:hunter2@support.example.com/api"))
    (finding,) = with_code(validate_data(doc), "UAC023")
    assert "hunter2" not in finding.message + finding.fix
    assert "svc" not in finding.message
    assert "backend.auth" in finding.fix


def test_two_unknown_fields_give_two_findings_with_a_suggestion() -> None:
    doc = mutated(_all(_set("descripton", "x"), _set("colour", "red")))
    unknown = [f for f in validate_data(doc) if "unknown field" in f.message]
    assert [f.path for f in unknown] == ["/descripton", "/colour"]
    assert "did you mean 'description'" in unknown[0].fix


def test_duplicate_tool_names_report_each_later_use() -> None:
    doc = mutated(
        _all(_set("endpoints/1/llm/tool_name", "get_ticket"), _set("endpoints/2/llm/tool_name", "get_ticket"))
    )
    assert [f.path for f in with_code(validate_data(doc), "UAC008")] == [
        "/endpoints/1/llm/tool_name",
        "/endpoints/2/llm/tool_name",
    ]


def test_example_violations_are_one_finding_each() -> None:
    doc = mutated(_set("endpoints/1/llm/examples/0/input", {"subject": "", "requester": 5, "extra": True}))
    findings = with_code(validate_data(doc), "UAC010")
    base = "/endpoints/1/llm/examples/0/input"
    assert sorted(f.path for f in findings) == [f"{base}/requester", f"{base}/subject"]


def test_broken_input_schema_skips_example_checks_instead_of_crashing() -> None:
    doc = mutated(_set("endpoints/0/input_schema/properties/ticket_id/pattern", "(unclosed"))
    findings = validate_data(doc)
    assert [f.code for f in findings] == ["UAC001"]
    assert findings[0].path == "/endpoints/0/input_schema/properties/ticket_id/pattern"


def test_unresolvable_ref_in_input_schema_is_reported_not_fetched() -> None:
    doc = mutated(
        _set("endpoints/0/input_schema/properties/ticket_id", {"$ref": "https://schemas.invalid/id.json"})
    )
    findings = validate_data(doc)
    assert [(f.code, f.path) for f in findings] == [("UAC001", "/endpoints/0/input_schema")]
    assert "cannot be resolved" in findings[0].message


def test_raw_body_conflicting_with_body_arguments() -> None:
    doc = mutated(_set("endpoints/1/input_schema/properties/payload", {"type": "array", "x-in": "raw-body"}))
    findings = validate_data(doc)
    assert [(f.code, f.path) for f in findings] == [
        ("UAC001", "/endpoints/1/input_schema/properties/payload/x-in")
    ]
    assert "'subject'" in findings[0].message


@pytest.mark.parametrize("media", ["application/x-www-form-urlencoded", "multipart/form-data"])
def test_a_form_body_is_valid_and_its_raw_body_must_be_an_object(media: str) -> None:
    form = mutated(_set("endpoints/1/body_media_type", media))
    assert [f for f in validate_data(form) if f.is_error] == []

    def raw(kind: str) -> Mutation:
        def apply(doc: Doc) -> None:
            ep(doc, 1)["body_media_type"] = media
            ep(doc, 1)["input_schema"]["properties"] = {"payload": {"type": kind, "x-in": "raw-body"}}
            ep(doc, 1)["input_schema"]["required"] = ["payload"]
            ep(doc, 1)["llm"]["examples"] = []

        return apply

    assert [f for f in validate_data(mutated(raw("object"))) if f.is_error] == []
    findings = [f for f in validate_data(mutated(raw("array"))) if f.is_error]
    assert [(f.code, f.path) for f in findings] == [
        ("UAC001", "/endpoints/1/input_schema/properties/payload/type")
    ]
    assert media in findings[0].message and "type: object" in findings[0].fix


def test_an_unknown_body_media_type_is_refused_with_the_choices() -> None:
    findings = validate_data(mutated(_set("endpoints/1/body_media_type", "text/xml")))
    assert [(f.code, f.path) for f in findings if f.is_error] == [("UAC001", "/endpoints/1/body_media_type")]
    assert "multipart/form-data" in findings[0].message + findings[0].fix
