"""Audit: every call leaves one durable, chained record before its answer leaves the gateway.

It sits right after observe, so it sees every call, refused ones included, and what decided
them (the authorize stage's note). The record says who called, which tool (or the name asked
for, scrubbed, when none matched), a keyed hash of the arguments, the decision and its reasons,
the outcome and its code, and the trace (for a commit, discard or resume: the parked call's id).
The stage waits until the record is committed: if it cannot be, the caller gets `S-TOOL-AUDIT`
instead of the result, and while the audit log cannot be written new calls are refused before
anything runs (fail closed). A failed call also leaves a snapshot, when a sink is given: the
envelope it was answered with and its arguments with secrets redacted, written off the call's path.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Protocol

from colonnade.calls.call import Call
from colonnade.calls.call_errors import error
from colonnade.calls.decision_note import DecisionNote, taking_note
from colonnade.calls.envelope import CallResult, CallStatus
from colonnade.calls.pipeline import Next
from colonnade.governance.audit import AuditEvent, AuditLog, AuditUnavailable, EventKind
from colonnade.observability.redaction import scrub
from colonnade.observability.tracing import io_span
from colonnade.store.error_snapshots_repo import ErrorSnapshot

__all__ = ["Audit", "SnapshotSink"]

_FAILED = frozenset({CallStatus.RETRYABLE_ERROR, CallStatus.TERMINAL_ERROR, CallStatus.INVALID_REQUEST})


class SnapshotSink(Protocol):
    def submit(self, snapshot: ErrorSnapshot) -> None: ...

_UNWRITABLE = "the audit log cannot be written; the call was not run"


class Audit:
    def __init__(self, log: AuditLog, snapshots: SnapshotSink | None = None) -> None:
        self.log = log
        self.snapshots = snapshots

    async def __call__(self, call: Call, next: Next) -> CallResult:
        if not self.log.writable:
            return await self._recorded(call, DecisionNote(), _refused(call, _UNWRITABLE))
        with taking_note() as note:
            try:
                result = await next(call)
            except BaseException as exc:  # a stray fault or a cancellation is still recorded
                self.log.submit(self._event(call, note, None, type(exc).__name__))
                raise
        if self.snapshots is not None and result.status in _FAILED and result.error is not None:
            self.snapshots.submit(_snapshot(call, note, result))
        return await self._recorded(call, note, result)

    async def _recorded(self, call: Call, note: DecisionNote, result: CallResult) -> CallResult:
        try:
            with io_span("colonnade.store audit.append"):
                await self.log.append(self._event(call, note, result))
        except AuditUnavailable:
            withheld = _refused(call, "the call's audit record could not be written; its result is withheld")
            # What the call did to the world stays stated, so the caller knows an effect may have happened.
            return withheld.model_copy(update={"side_effects": result.side_effects})
        return result

    def _event(
        self, call: Call, note: DecisionNote, result: CallResult | None, fault: str | None = None
    ) -> AuditEvent:
        request, decision, tool = call.request, note.decision, note.tool
        details: dict[str, object] = {"dry_run": request.dry_run} if request.dry_run else {}
        if tool is not None:
            details["version"] = tool.version
        if fault is not None:
            details["fault"] = fault
        if note.policy is not None:
            details["policy"] = note.policy
        if note.attestation is not None:
            details["attestation"] = note.attestation
        if note.resume is not None:
            details["resume"] = note.resume
        return AuditEvent.by(
            call.principal,
            EventKind.CALL,
            # A gateway tool belongs to no tenant: its call is recorded in the caller's.
            tenant=tool.tenant if tool is not None and not tool.builtin else call.principal.tenant,
            tool=tool.canonical_name if tool is not None else request.tool_id,
            args_hash=self.log.args_hash(request.input),
            decision=None if decision is None else ("allow" if decision.allowed else "deny"),
            reasons=decision.reasons if decision is not None else (),
            outcome=result.status.value if result is not None else _fault_outcome(fault),
            code=result.error.code if result is not None and result.error is not None else None,
            trace_id=request.context.trace_id,
            call_id=request.call_id,
            details=details,
        )


def _fault_outcome(fault: str | None) -> str:
    return "cancelled" if fault == "CancelledError" else "fault"


def _refused(call: Call, message: str) -> CallResult:
    status, err = error("S-TOOL-AUDIT", message)
    return call.result(status, error=err).model_copy(update={"provenance": None, "side_effects": []})


def _snapshot(call: Call, note: DecisionNote, result: CallResult) -> ErrorSnapshot:
    request, tool = call.request, note.tool
    envelope: dict[str, Any] = scrub(result.model_dump(mode="json"))
    return ErrorSnapshot(
        call_id=request.call_id,
        at=datetime.now(UTC),
        tenant=tool.tenant if tool is not None and not tool.builtin else call.principal.tenant,
        tool=tool.canonical_name if tool is not None else str(scrub(request.tool_id)),
        actor=call.principal.key,
        code=result.error.code if result.error is not None else "S-TOOL-INTERNAL",
        trace_id=request.context.trace_id,
        arguments=scrub(dict(request.input)),
        envelope=envelope,
    )
