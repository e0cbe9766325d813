"""The envelope schemas: generated from the models, checked in, never drifting, and truthful."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from colonnade.calls.call_errors import error
from colonnade.calls.envelope import CallRequest, CallResult, CallStatus, Pending
from colonnade.calls.envelope_schemas import (
    CALL_REQUEST,
    CALL_RESULT,
    DIALECT,
    ENVELOPE_SCHEMAS,
    SCHEMA_DIR,
    EnvelopeSchema,
    drifted_files,
    main,
    write_schemas,
)


def validator(schema_name: str) -> Draft202012Validator:
    path = SCHEMA_DIR / f"{schema_name}.schema.json"
    return Draft202012Validator(json.loads(path.read_text(encoding="utf-8")))


def test_checked_in_schemas_match_the_models() -> None:
    stale = drifted_files()
    names = ", ".join(str(p) for p in stale)
    assert not stale, f"{names} out of date with calls/envelope.py: run `make schemas` and commit the result"


@pytest.mark.parametrize("envelope", ENVELOPE_SCHEMAS, ids=lambda e: e.name)
def test_each_schema_is_draft_2020_12_with_id_and_title_first(envelope: EnvelopeSchema) -> None:
    schema = envelope.schema()
    assert list(schema)[:4] == ["$schema", "$id", "title", "description"]
    assert list(schema)[-1] == "$defs"
    assert schema["$schema"] == DIALECT
    assert (schema["$id"], schema["title"]) == (envelope.schema_id, envelope.title)
    assert envelope.path.name == f"{envelope.name}.schema.json"
    Draft202012Validator.check_schema(schema)


def test_ids_and_titles_name_the_envelopes() -> None:
    assert CALL_REQUEST.schema_id == "https://colonnade.dev/schemas/call-request.schema.json"
    assert CALL_RESULT.schema_id == "https://colonnade.dev/schemas/call-result.schema.json"
    assert CALL_REQUEST.schema()["title"] == "Colonnade CallRequest"
    assert CALL_RESULT.schema()["title"] == "Colonnade CallResult"


def test_request_schema_requires_only_the_tool() -> None:
    schema = CALL_REQUEST.schema()
    assert schema["required"] == ["tool_id"]
    assert schema["additionalProperties"] is False
    check = validator("call-request")
    assert check.is_valid({"tool_id": "acme:crm:get_customer"})
    assert check.is_valid(json.loads(CallRequest(tool_id="t", input={"a": [1]}).model_dump_json()))
    assert not check.is_valid({"tool_id": "t", "dry_run": "yes"})
    assert not check.is_valid({"tool_id": "t", "constraints": {"retry_policy": {"max_attempts": 11}}})
    assert not check.is_valid({"input": {}})


def test_result_schema_requires_what_every_result_carries() -> None:
    schema = CALL_RESULT.schema()
    assert set(schema["required"]) == {
        "envelope_version",
        "call_id",
        "status",
        "side_effects",
        "metrics",
        "warnings",
    }
    assert schema["properties"]["envelope_version"]["const"] == 2  # clients can tell this shape from v1
    metrics = schema["$defs"]["CallMetrics"]
    assert metrics["required"] == ["duration_ms"]
    # Not every adapter can measure CPU and memory: those are null then, never a made-up number.
    assert {"type": "null"} in metrics["properties"]["cpu_ms"]["anyOf"]
    assert {"type": "null"} in metrics["properties"]["memory_peak_mb"]["anyOf"]
    assert schema["$defs"]["CallError"]["required"] == ["code", "message", "details", "fix"]
    assert set(schema["$defs"]["CallStatus"]["enum"]) == {s.value for s in CallStatus}


def test_result_schema_holds_status_definitive() -> None:
    check = validator("call-result")
    status, err = error("R-UPSTREAM-CONNECT", "backend down")
    failure = CallResult(call_id="c", status=status, error=err)
    success = CallResult(call_id="c", status=CallStatus.SUCCESS, output={"ok": True})
    assert check.is_valid(json.loads(failure.model_dump_json()))
    assert check.is_valid(json.loads(success.model_dump_json()))
    assert check.is_valid(failure.model_dump(mode="json", exclude_none=True))
    partial = {**json.loads(success.model_dump_json()), "error": err.model_dump()}
    assert not check.is_valid(partial), "a success must never carry an error"
    silent = {**json.loads(failure.model_dump_json()), "error": None}
    assert not check.is_valid(silent), "a failure must always carry an error"


def test_a_pending_result_carries_what_to_do_next_and_nothing_else() -> None:
    check = validator("call-result")
    pending = CallResult(
        call_id="c",
        status=CallStatus.PENDING,
        pending=Pending(
            reason="awaiting_approval",
            token="ap_x",
            expires_at=datetime(2030, 1, 1, tzinfo=UTC),
            next_action="ask an approver to approve call c",
        ),
    )
    valid = json.loads(pending.model_dump_json())
    assert check.is_valid(valid)
    assert not check.is_valid({**valid, "pending": None}), "a pending result says what to do next"
    _, err = error("R-UPSTREAM-CONNECT", "backend down")
    assert not check.is_valid({**valid, "error": err.model_dump()}), "a pending result is not an error"
    success = json.loads(CallResult(call_id="c", status=CallStatus.SUCCESS).model_dump_json())
    assert not check.is_valid({**success, "pending": valid["pending"]}), "only a pending result waits"
    assert not check.is_valid({**valid, "envelope_version": 1})


def test_generation_is_stable_and_returns_copies() -> None:
    assert CALL_RESULT.text() == CALL_RESULT.text()
    CALL_RESULT.schema()["properties"].clear()
    assert "status" in CALL_RESULT.schema()["properties"]


def test_write_and_drift_detection(tmp_path: Path) -> None:
    target = tmp_path / "out"
    names = ["call-request.schema.json", "call-result.schema.json", "call-result-v1.schema.json"]
    assert {p.name for p in drifted_files(target)} == set(names)
    written = write_schemas(target)
    assert [p.name for p in written] == names
    assert drifted_files(target) == []
    (target / "call-result.schema.json").write_text("{}\n", encoding="utf-8")
    assert [p.name for p in drifted_files(target)] == ["call-result.schema.json"]


def test_module_entry_point_writes_the_files(tmp_path: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "colonnade.calls.envelope_schemas", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert "call-request.schema.json" in completed.stderr
    assert drifted_files(tmp_path) == []
    assert main(["a", "b"]) == 2
    blocked = tmp_path / "file"
    blocked.write_text("not a directory", encoding="utf-8")
    assert main([str(blocked)]) == 2
