"""Envelope version 1: every version 2 result projects into the four outcomes, valid against the
published strict schema, and the schema refuses what version 1 must never carry."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from colonnade.calls.call_errors import REGISTRY, error
from colonnade.calls.envelope import CallMetrics, CallResult, CallStatus, Pending, Provenance
from colonnade.calls.envelope_schemas import CALL_RESULT_V1
from colonnade.calls.envelope_v1 import (
    APPROVAL_PENDING,
    ERROR_CODE_PATTERN,
    INPUT_PENDING,
    CallResultV1,
    OutcomeV1,
    from_v1,
    project_v1,
    rendered,
)
from colonnade.contracts.model import SideEffects

CHECK = Draft202012Validator(CALL_RESULT_V1.schema(), format_checker=Draft202012Validator.FORMAT_CHECKER)
PROVENANCE = Provenance(tool_id="acme:crm:get_customer", tool_version="1.0.0", digest="d" * 64)
EXPIRES = datetime(2030, 1, 1, tzinfo=UTC)


def problems(document: dict[str, Any]) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in CHECK.iter_errors(document)]


def v1(result: CallResult, **kwargs: Any) -> dict[str, Any]:
    document = rendered(result, 1, **kwargs)
    assert problems(document) == []
    return document


def parked(reason: str) -> CallResult:
    pending = Pending(reason=reason, token="ap_123", expires_at=EXPIRES, next_action="ask an approver")  # type: ignore[arg-type]
    return CallResult(call_id="c", status=CallStatus.PENDING, provenance=PROVENANCE, pending=pending)


def test_every_version_2_status_becomes_one_of_the_four_outcomes() -> None:
    seen = set()
    for status in CallStatus:
        err = (
            None
            if status in (CallStatus.SUCCESS, CallStatus.SUCCESS_PREP, CallStatus.PENDING)
            else (error(next(c for c, s in REGISTRY.items() if s.status is status))[1])
        )
        result = (
            parked("awaiting_approval")
            if status is CallStatus.PENDING
            else CallResult(call_id="c", status=status, error=err)
        )
        seen.add(v1(result)["status"])
    assert seen == {outcome.value for outcome in OutcomeV1}
    assert CHECK.schema["$defs"]["OutcomeV1"]["enum"] == [
        "success",
        "retryable_error",
        "terminal_error",
        "invalid_request",
    ]


def test_a_parked_approval_is_a_terminal_error_that_says_what_to_do() -> None:
    document = v1(parked("awaiting_approval"))
    assert document["status"] == "terminal_error"
    assert document["error"]["code"] == APPROVAL_PENDING
    assert document["error"]["details"] == {
        "approval_id": "ap_123",
        "reason": "awaiting_approval",
        "token": "ap_123",
        "expires_at": "2030-01-01T00:00:00+00:00",
        "next_action": "ask an approver",
    }
    assert "ask an approver" in document["error"]["message"]
    assert "pending" not in document
    assert REGISTRY[APPROVAL_PENDING].status is CallStatus.TERMINAL_ERROR


def test_a_call_waiting_for_input_names_its_own_code() -> None:
    document = v1(parked("awaiting_input"))
    assert (document["status"], document["error"]["code"]) == ("terminal_error", INPUT_PENDING)
    assert "approval_id" not in document["error"]["details"]


def test_a_prepared_call_is_a_success_with_its_commit_token() -> None:
    prepared = CallResult(
        call_id="c",
        status=CallStatus.SUCCESS_PREP,
        output={"reservation_id": "r1"},
        commit_token="ct_abc",
        side_effects=["write"],
        provenance=PROVENANCE,
        warnings=["prepared: commit with POST /v1/calls/commit before 2030"],
    )
    document = v1(prepared)
    assert document["status"] == "success"
    assert document["commit_token"] == "ct_abc"
    assert document["output"] == {"reservation_id": "r1"}
    assert document["side_effects"] == ["write"]
    assert document["warnings"] == prepared.warnings


def test_duration_is_an_integer_and_provenance_is_always_an_object() -> None:
    status, err = error("I-REQ-UNKNOWN-TOOL", "no tool named 'x'")
    unresolved = CallResult(call_id="c", status=status, error=err, metrics=CallMetrics(duration_ms=12.6))
    document = v1(unresolved, tool_id="x")
    assert document["metrics"] == {"duration_ms": 13, "cpu_ms": None, "memory_peak_mb": None}
    assert isinstance(document["metrics"]["duration_ms"], int)
    assert document["provenance"] == {"tool_id": "x", "tool_version": None, "digest": None}
    resolved = v1(CallResult(call_id="c", status=CallStatus.SUCCESS, provenance=PROVENANCE))
    assert resolved["provenance"] == PROVENANCE.model_dump()


def test_version_2_rendering_is_the_result_itself() -> None:
    result = parked("awaiting_approval")
    assert rendered(result, 2) == result.model_dump(mode="json")
    assert project_v1(result).envelope_version == 1


def valid_success() -> dict[str, Any]:
    return v1(CallResult(call_id="c", status=CallStatus.SUCCESS, output=[1], provenance=PROVENANCE))


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"status": "pending"}, "version 1 has four outcomes"),
        ({"status": "success_prep"}, "version 1 has four outcomes"),
        ({"pending": None}, "no fields beyond version 1's"),
        ({"envelope_version": 2}, "the version is in the schema"),
        ({"provenance": None}, "provenance is always present"),
        ({"side_effects": ["launch"]}, "side effects are the contract's kinds"),
        ({"metrics": {"duration_ms": 1.5, "cpu_ms": None, "memory_peak_mb": None}}, "integer duration"),
        ({"metrics": {"duration_ms": 1}}, "every metric field is required"),
        ({"error": {"code": "E1", "message": "m", "details": {}, "fix": "f"}}, "a success has no error"),
    ],
)
def test_the_schema_refuses_what_version_1_never_carries(change: dict[str, Any], why: str) -> None:
    assert problems({**valid_success(), **change}), why


@pytest.mark.parametrize(
    "field", ["call_id", "status", "output", "error", "metrics", "provenance", "commit_token"]
)
def test_every_field_is_required(field: str) -> None:
    document = valid_success()
    del document[field]
    assert problems(document), field


def test_a_failure_needs_an_error_with_a_registered_shape_of_code() -> None:
    status, err = error("R-UPSTREAM-CONNECT", "down")
    failure = v1(CallResult(call_id="c", status=status, error=err))
    assert problems({**failure, "error": None}), "a failure always carries an error"
    bad_code = {**failure, "error": {**failure["error"], "code": "oops"}}
    assert problems(bad_code)
    assert all(re.match(ERROR_CODE_PATTERN, code) for code in REGISTRY)


def test_the_side_effect_enum_is_the_contract_kinds() -> None:
    assert CHECK.schema["$defs"]["SideEffects"]["enum"] == [kind.value for kind in SideEffects]


def test_the_published_file_is_this_schema() -> None:
    assert json.loads(CALL_RESULT_V1.path.read_text(encoding="utf-8")) == CALL_RESULT_V1.schema()


@pytest.mark.parametrize(
    "result",
    [
        parked("awaiting_approval"),
        parked("awaiting_input"),
        CallResult(
            call_id="c",
            status=CallStatus.SUCCESS_PREP,
            output={"reservation_id": "r1"},
            commit_token="ct_abc",
            side_effects=["write"],
            provenance=PROVENANCE,
            metrics=CallMetrics(duration_ms=7.0),
        ),
        CallResult(call_id="c", status=CallStatus.SUCCESS, output=[1], provenance=PROVENANCE),
        CallResult(call_id="c", status=error("R-UPSTREAM-CONNECT")[0], error=error("R-UPSTREAM-CONNECT")[1]),
    ],
    ids=lambda r: r.status.value + (f"-{r.pending.reason}" if r.pending else ""),
)
def test_a_version_1_answer_reads_back_as_the_result_it_came_from(result: CallResult) -> None:
    """What a version 2 client (the Python SDK) does with a v1 answer: nothing a caller acts on is lost."""
    back = from_v1(CallResultV1.model_validate(v1(result)))
    assert back == result.model_copy(
        update={"metrics": CallMetrics(duration_ms=round(result.metrics.duration_ms))}
    )
