"""The demo contracts' examples run for real against the demo backend, the way the gateway sends them.

Requests are built from `binding_for(operation)` (the gateway's argument-location rule, `x-in`
included), so a wrong location in a contract fails here. Examples of `none`/`read` operations are
exactly what `colonnade smoke` executes; `write`/`destructive` ones run on a separate backend.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx2
import pytest

from colonnade.catalog.http_binding import ParamLocation, binding_for
from colonnade.contracts.example_match import mismatch
from colonnade.contracts.load import load_document
from colonnade.contracts.model import Contract, LlmExample, Operation, SideEffects

CONTRACTS_DIR = Path(__file__).resolve().parents[2] / "examples" / "contracts"
QUIET = (SideEffects.NONE, SideEffects.READ)


def _examples() -> tuple[list[Any], list[Any]]:
    """(none/read examples, write/destructive examples) of every demo contract, as test params."""
    quiet: list[Any] = []
    changing: list[Any] = []
    for path in sorted(CONTRACTS_DIR.glob("*.yaml")):
        for op in Contract.model_validate(load_document(path).data).operations():
            llm = op.endpoint.llm
            if llm is None:
                continue
            target = quiet if llm.side_effects in QUIET else changing
            target.extend(
                pytest.param(op, example, id=f"{op.canonical_name}#{index}")
                for index, example in enumerate(llm.examples)
            )
    return quiet, changing


QUIET_EXAMPLES, CHANGING_EXAMPLES = _examples()


def build_request(client: httpx2.Client, operation: Operation, arguments: dict[str, Any]) -> httpx2.Request:
    """Place every argument where the binding says: path, query string, header or JSON body."""
    binding = binding_for(operation)
    path, query, headers, body = binding.path, {}, {}, {}
    for name, value in arguments.items():
        spec = binding.param(name)
        assert spec is not None, f"{operation}: argument {name} is not in the input schema"
        if spec.location is ParamLocation.PATH:
            path = path.replace(f"{{{name}}}", quote(str(value), safe=""))
        elif spec.location is ParamLocation.QUERY:
            query[spec.wire_name] = value
        elif spec.location is ParamLocation.HEADER:
            headers[spec.wire_name] = str(value)
        else:
            assert spec.location is ParamLocation.BODY, spec
            body[spec.wire_name] = value
    payload = body if binding.method not in ("GET", "DELETE") else None
    return client.build_request(binding.method, path, params=query, headers=headers, json=payload)


Conforms = Callable[[str, Any], None]


def run_example(client: httpx2.Client, operation: Operation, example: LlmExample, conforms: Conforms) -> None:
    response = client.send(build_request(client, operation, example.input))
    assert response.is_success, f"{operation} example failed: {response.status_code} {response.text}"
    body = response.json()
    conforms(operation.endpoint.operation_id, body)
    problem = mismatch(body, example.expected_output_contains)
    assert problem is None, f"{operation}: {problem}: {response.text[:300]}"


def test_every_side_effect_level_has_examples() -> None:
    assert len(QUIET_EXAMPLES) >= 6
    assert len(CHANGING_EXAMPLES) >= 6


@pytest.mark.parametrize(("operation", "example"), QUIET_EXAMPLES)
def test_read_and_none_examples_hold_on_the_seeded_data(
    client: httpx2.Client, operation: Operation, example: LlmExample, assert_conforms: Conforms
) -> None:
    run_example(client, operation, example, assert_conforms)


@pytest.mark.parametrize(("operation", "example"), CHANGING_EXAMPLES)
def test_write_and_destructive_examples_describe_real_calls(
    scratch_client: httpx2.Client, operation: Operation, example: LlmExample, assert_conforms: Conforms
) -> None:
    run_example(scratch_client, operation, example, assert_conforms)


def test_idempotency_key_travels_as_a_header(client: httpx2.Client, operations: dict[str, Operation]) -> None:
    """The only `x-in` of the demo: create_invoice's idempotency_key is the Idempotency-Key header."""
    arguments = {
        "customer_id": "C-1003",
        "lines": [{"description": "x", "quantity": 1, "unit_price_cents": 5}],
        "idempotency_key": "header-check-0001",
    }
    request = build_request(client, operations["create_invoice"], arguments)
    assert request.headers["Idempotency-Key"] == "header-check-0001"
    assert "idempotency_key" not in json.loads(request.content)
    first, second = client.send(request), client.send(request)
    assert second.json()["id"] == first.json()["id"]
    assert second.headers["idempotent-replayed"] == "true"


DOCUMENTED_ACTIONS = (
    # docs/approvals.md and docs/rest-api.md void INV-2001; docs/approvals.md's MCP walkthrough and
    # docs/pages.md void INV-2003; then every write/destructive example of the contracts runs too.
    ("POST", "/invoices/INV-2001/void", {"reason": "Issued in error"}),
    ("POST", "/invoices/INV-2003/void", {"reason": "Replaced by a corrected invoice"}),
)


def test_read_examples_still_hold_after_the_documented_walkthroughs(
    launch: Callable[..., str], assert_conforms: Conforms
) -> None:
    """A user who followed the docs runs `colonnade smoke` again: its read examples must still pass."""
    with httpx2.Client(base_url=launch(), timeout=10.0) as http:
        for method, path, body in DOCUMENTED_ACTIONS:
            assert http.request(method, path, json=body).is_success, path
        for param in CHANGING_EXAMPLES:
            operation, example = param.values
            http.send(build_request(http, operation, example.input))
        for param in QUIET_EXAMPLES:
            operation, example = param.values
            run_example(http, operation, example, assert_conforms)
