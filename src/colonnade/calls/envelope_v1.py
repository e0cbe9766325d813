"""Envelope version 1: the four outcomes only, projected from the gateway's (version 2) CallResult.

A client written against the tool-call contract's first schemas knows four statuses
(`success | retryable_error | terminal_error | invalid_request`) and nothing else, so version 1
carries no `pending` object and no `success_prep` status. The projection is total and loses no
instruction a caller needs:

- `success_prep` (phase 1 of a two-phase call) is a `success` whose `commit_token` is set and whose
  warnings say to commit; the output is the prepared output, unchanged.
- `pending` (a call parked for an approval or the user's input) is a `terminal_error`
  `P-PRECOND-APPROVAL-PENDING` (or `P-PRECOND-INPUT-PENDING`) whose details carry the approval id,
  the token, the expiry and what to do next: nothing ran, calling again as told resumes it.
- `duration_ms` is an integer (rounded), `side_effects` a list of the contract's kinds, and
  `provenance` is always an object: a call that never resolved a tool names what it asked for,
  with `tool_version` and `digest` null.

Every field is required (nullable where it may be empty); the models forbid extra fields, so the
published `call-result-v1.schema.json` is strict. Answers are rendered from `v1_document`, a plain
dict built by construction to fit that schema (validating each one made a REST answer two to four
times as costly: bench/envelope_versions.py); `project_v1` validates it into the typed model, and the tests
check every answer they see against the published schema.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic_core import to_jsonable_python

from colonnade.calls.call_errors import spec_for
from colonnade.calls.envelope import (
    CallError,
    CallMetrics,
    CallResult,
    CallStatus,
    EnvelopeVersion,
    Pending,
    Provenance,
)
from colonnade.contracts.model import SideEffects

__all__ = [
    "APPROVAL_PENDING",
    "ERROR_CODE_PATTERN",
    "INPUT_PENDING",
    "CallErrorV1",
    "CallMetricsV1",
    "CallResultV1",
    "OutcomeV1",
    "ProvenanceV1",
    "from_v1",
    "project_v1",
    "rendered",
    "v1_document",
]

APPROVAL_PENDING = "P-PRECOND-APPROVAL-PENDING"
INPUT_PENDING = "P-PRECOND-INPUT-PENDING"
ERROR_CODE_PATTERN = (
    r"^(I-REQ|A-AUTH|P-PRECOND|R-TIMEOUT|R-UPSTREAM|R-CAP|S-TOOL|C-CONTRACT|D-DATA)(-[A-Z0-9]+)*$"
)
"""Every registered code: its class prefix, then upper-case words (docs/errors.md lists them)."""


class OutcomeV1(StrEnum):
    SUCCESS = "success"
    RETRYABLE_ERROR = "retryable_error"
    TERMINAL_ERROR = "terminal_error"
    INVALID_REQUEST = "invalid_request"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CallErrorV1(_Strict):
    code: str = Field(pattern=ERROR_CODE_PATTERN, description="A stable code of docs/errors.md.")
    message: str
    details: dict[str, Any]
    fix: str = Field(description="What the caller can do about it, in plain words.")


class CallMetricsV1(_Strict):
    duration_ms: int = Field(
        ge=0, description="Wall time from resolution to outcome, rounded to a millisecond."
    )
    cpu_ms: float | None = Field(ge=0, description="CPU time of the tool, when its adapter measures it.")
    memory_peak_mb: float | None = Field(
        ge=0, description="Peak memory of the tool, when its adapter measures it."
    )


class ProvenanceV1(_Strict):
    tool_id: str = Field(description="The tool's canonical name, or the name asked for when none resolved.")
    tool_version: str | None = Field(description="The version that ran; null when no tool resolved.")
    digest: str | None = Field(description="The tool definition's digest; null when no tool resolved.")


class CallResultV1(_Strict):
    envelope_version: Literal[1]
    call_id: str
    status: OutcomeV1
    output: Any
    error: CallErrorV1 | None
    side_effects: list[SideEffects]
    metrics: CallMetricsV1
    provenance: ProvenanceV1
    warnings: list[str]
    commit_token: str | None


_STATUS: dict[CallStatus, OutcomeV1] = {
    CallStatus.SUCCESS: OutcomeV1.SUCCESS,
    CallStatus.SUCCESS_PREP: OutcomeV1.SUCCESS,
    CallStatus.PENDING: OutcomeV1.TERMINAL_ERROR,
    CallStatus.RETRYABLE_ERROR: OutcomeV1.RETRYABLE_ERROR,
    CallStatus.TERMINAL_ERROR: OutcomeV1.TERMINAL_ERROR,
    CallStatus.INVALID_REQUEST: OutcomeV1.INVALID_REQUEST,
}


def v1_document(result: CallResult, *, tool_id: str = "") -> dict[str, Any]:
    """The version 1 answer of `result` as a dict (values as the result holds them); `tool_id` is
    what the caller asked for (the provenance of a call that never resolved a tool)."""
    if result.pending is not None:
        error: dict[str, Any] | None = _pending_error(result.pending)
    else:
        error = None if result.error is None else _error(result.error)
    metrics = result.metrics
    return {
        "envelope_version": 1,
        "call_id": result.call_id,
        "status": _STATUS[result.status].value,
        "output": result.output,
        "error": error,
        "side_effects": [SideEffects(kind).value for kind in result.side_effects],
        "metrics": {
            "duration_ms": max(0, round(metrics.duration_ms)),
            "cpu_ms": metrics.cpu_ms,
            "memory_peak_mb": metrics.memory_peak_mb,
        },
        "provenance": _provenance(result, tool_id),
        "warnings": list(result.warnings),
        "commit_token": result.commit_token,
    }


def project_v1(result: CallResult, *, tool_id: str = "") -> CallResultV1:
    """The version 1 answer of `result`, validated into the typed model."""
    return CallResultV1.model_validate(v1_document(result, tool_id=tool_id))


def rendered(result: CallResult, version: EnvelopeVersion, *, tool_id: str = "") -> dict[str, Any]:
    """`result` as JSON-ready data in the envelope version the caller chose."""
    if version == 1:
        return to_jsonable_python(v1_document(result, tool_id=tool_id))  # type: ignore[no-any-return]
    return result.model_dump(mode="json")


def from_v1(answer: CallResultV1) -> CallResult:
    """A version 1 answer read back as version 2, for clients that model version 2 only: a parked
    call's code becomes `pending` again, a success with a commit token `success_prep`."""
    error = answer.error
    if error is not None and error.code in (APPROVAL_PENDING, INPUT_PENDING):
        details = error.details
        pending = Pending(
            reason="awaiting_approval" if error.code == APPROVAL_PENDING else "awaiting_input",
            token=details["token"],
            expires_at=details["expires_at"],
            next_action=details["next_action"],
        )
        status, kept, parked = CallStatus.PENDING, None, pending
    else:
        status, kept, parked = CallStatus(answer.status.value), error, None
        if status is CallStatus.SUCCESS and answer.commit_token is not None:
            status = CallStatus.SUCCESS_PREP
    known = answer.provenance
    return CallResult(
        call_id=answer.call_id,
        status=status,
        output=answer.output,
        error=None if kept is None else CallError(**kept.model_dump()),
        side_effects=[kind.value for kind in answer.side_effects],
        metrics=CallMetrics(**answer.metrics.model_dump()),
        provenance=(
            None
            if known.tool_version is None or known.digest is None
            else Provenance(tool_id=known.tool_id, tool_version=known.tool_version, digest=known.digest)
        ),
        warnings=list(answer.warnings),
        commit_token=answer.commit_token,
        pending=parked,
    )


def _error(error: CallError) -> dict[str, Any]:
    return {"code": error.code, "message": error.message, "details": error.details, "fix": error.fix}


def _pending_error(pending: Pending) -> dict[str, Any]:
    awaiting_approval = pending.reason == "awaiting_approval"
    spec = spec_for(APPROVAL_PENDING if awaiting_approval else INPUT_PENDING)
    waits_for = "an approver's decision" if awaiting_approval else "the user's answer"
    details: dict[str, Any] = {
        "reason": pending.reason,
        "token": pending.token,
        "expires_at": pending.expires_at.isoformat(),
        "next_action": pending.next_action,
    }
    if awaiting_approval:
        details = {"approval_id": pending.token, **details}  # an approval is named by its token
    message = f"the call is parked until {waits_for}; nothing ran yet. {pending.next_action}"
    return {"code": spec.code, "message": message, "details": details, "fix": spec.fix}


def _provenance(result: CallResult, tool_id: str) -> dict[str, str | None]:
    known = result.provenance
    if known is None:
        return {"tool_id": tool_id, "tool_version": None, "digest": None}
    return {"tool_id": known.tool_id, "tool_version": known.tool_version, "digest": known.digest}
