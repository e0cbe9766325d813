"""Audit: every call leaves one durable, chained record before its answer leaves the gateway.

It sits right after observe, so it sees every call, refused ones included, and what decided
them (the authorize stage's note). The record says who called, which tool (or the name asked
for, scrubbed, when none matched), a keyed hash of the arguments, the decision and its reasons,
the outcome and its code, and the trace (for a commit, discard or resume: the parked call's id).

The stage waits until the record is committed, but never past the call's deadline, and starts no
new try once it has passed. An error answer carries nothing to withhold: when its record is still
under way at the deadline, the error is answered and the record appended until the log takes it.
A result (a success, a prepared call, a pending one) whose record is not durable by then, and any
answer whose record failed, is withheld, and the answer says what the caller may do, by whether
the call reached its backend (the execute stage's note):
- it did not: nothing ran, so trying again is safe: `R-CAP-STORE-UNAVAILABLE` (the database
  failed) or `R-TIMEOUT-STORE` (it did not answer in time);
- it did, and a resend cannot repeat its effect (it has an idempotency key, which the
  idempotency stage holds until its outcome is recorded, or the tool is safe to run again):
  `R-CAP-STORE-UNRECORDED` or `R-TIMEOUT-UNRECORDED`, whose fix says that the effect may have
  happened and to resend with the same key, which then replays the recorded outcome;
- it did, without a key, and is not safe to run again: `S-TOOL-EFFECT-UNKNOWN-NO-KEY`, as any
  unkeyed call that may have acted and cannot say how it ended.
The record of a call that reached its backend is not given up: it is appended again in the
background until the log takes it (`drain()` waits for those at shutdown). A try whose commit
landed but whose answer was lost (a connection cut at that moment) can leave that call two
records with one call_id; a record is never missing for an effect that happened while the process
lives. While the audit log cannot be written, new calls are refused before anything runs (fail
closed), with the same retryable answer. A failed call also leaves a snapshot, when a sink is
given: the envelope it was answered with and its arguments with secrets redacted, written off the
call's path.

Where the log joins a group commit (PostgreSQL), the call's idempotency outcome is not written by
the idempotency stage on its own but handed here (`join_record`) and started with the record, so
both go to the database in one statement and one commit: a keyed call commits twice (claim, then
outcome and record) instead of three times. The answer waits for both. An outcome not recorded by
the deadline makes the answer the idempotency stage's `R-TIMEOUT-UNRECORDED` (the call ran: resend
with the same key) and its record is kept appending; when the two were written apart (a lock held
elsewhere, a full batch) and only the record landed, the record says how the call ended.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Protocol

from colonnade.calls.call import Call
from colonnade.calls.call_errors import error
from colonnade.calls.decision_note import DecisionNote, JointWrite, taking_note
from colonnade.calls.envelope import CallResult, CallStatus
from colonnade.calls.pipeline import Next
from colonnade.calls.stages.unkeyed_effects import EFFECT_UNKNOWN_NO_KEY
from colonnade.governance.audit import AuditEvent, AuditLog, AuditUnavailable, EventKind
from colonnade.observability.redaction import scrub
from colonnade.observability.tracing import io_span
from colonnade.store.error_snapshots_repo import ErrorSnapshot

__all__ = ["Audit", "SnapshotSink"]

logger = logging.getLogger(__name__)

RETRY_AFTER_MS = 250  # retry_after_ms of an answer withheld for its record
LATE_RECORDS_MAX = 10_000  # records of calls that ran, still being appended in the background
DRAIN_S = 10.0  # at shutdown, how long those are waited for
_BACKOFF_S = (0.01, 1.0)  # first and largest wait between tries of an append that failed
INLINE_BOUND_S = 10.0  # the longest an in-line SQLite append can take (lock and checkpoint waits)
TRIES = 3  # in-line tries for a call that ran (a pool reconnects after a cut); others get one
_UNWRITABLE = "the audit log cannot be written, so the call was not run"
_ERRORS = frozenset({CallStatus.RETRYABLE_ERROR, CallStatus.TERMINAL_ERROR, CallStatus.INVALID_REQUEST})


class SnapshotSink(Protocol):
    def submit(self, snapshot: ErrorSnapshot) -> None: ...


class Audit:
    def __init__(self, log: AuditLog, snapshots: SnapshotSink | None = None) -> None:
        self.log = log
        self.snapshots = snapshots
        self._late: set[asyncio.Future[Any]] = set()
        # The embedded SQLite log writes in line and waits for a busy lock a bounded while (seconds):
        # with more time left than that, its append needs no watching task (about 50 µs a call less).
        self._inline = bool(getattr(log.store, "inline", False))
        # A group commit writes the call's other durable writes with its record, in one commit.
        self._joins = bool(getattr(log.store, "grouped", False))

    async def __call__(self, call: Call, next: Next) -> CallResult:
        if not self.log.writable:
            refusal = _not_run(call, "R-CAP-STORE-UNAVAILABLE", _UNWRITABLE)
            return await self._recorded(call, DecisionNote(), refusal)
        with taking_note() as note:
            if self._joins:
                note.joint, note.joint_call = [], call.request.call_id
            try:
                result = await next(call)
            except BaseException as exc:  # a stray fault or a cancellation is still recorded
                self._start_joint(note)  # nobody waits for them: they go on in the background
                self.log.submit(self._event(call, note, None, type(exc).__name__))
                raise
        # Started first (nothing may keep them back) and before the record's append, in the same
        # turn of the loop: they are queued in the same batch as the record.
        joint = self._start_joint(note)
        if self.snapshots is not None and result.status in _ERRORS and result.error is not None:
            self.snapshots.submit(_snapshot(call, note, result))
        return await self._recorded(call, note, result, joint)

    async def _recorded(
        self,
        call: Call,
        note: DecisionNote,
        result: CallResult,
        joint: Sequence[asyncio.Future[CallResult | None]] = (),
    ) -> CallResult:
        """`result` once its record (and the `joint` writes) are durable; else the answer that says
        what the caller may do."""
        event = self._event(call, note, result)
        deadline = note.deadline if note.deadline is not None else call.deadline
        error = result.status in _ERRORS
        keep = note.dispatch is not None or error or bool(joint)  # a joint write: the call ran
        with io_span("colonnade.store audit.append"):
            failed = await self._append_by(event, deadline, keep=keep)
        instead = None
        for write in joint:  # each bounded by the call's deadline
            instead = (await asyncio.shield(write)) or instead
        if instead is not None:  # the call ran, and its outcome is not recorded (yet)
            return instead
        if failed is None or (error and not failed):
            return result
        return _withheld(call, note, result, failed)

    def _start_joint(self, note: DecisionNote) -> list[asyncio.Future[CallResult | None]]:
        """Start the writes handed to this call's record (kept until they end, as late records are)."""
        writes: list[JointWrite] = note.joint or []
        note.joint = None  # handed over: a write that joins from now on writes itself
        tasks: list[asyncio.Future[CallResult | None]] = [asyncio.ensure_future(write()) for write in writes]
        for task in tasks:
            self._late.add(task)
            task.add_done_callback(self._late.discard)
        return tasks

    async def _append_by(self, event: AuditEvent, deadline: float, *, keep: bool) -> bool | None:
        """Append `event` before `deadline` (`perf_counter` clock): None once durable, else whether it
        failed (True) or was still under way (False). With `keep`, the record is not given up: it is
        appended again until the log takes it."""
        pause, tries = _BACKOFF_S[0], TRIES if keep else 1
        for tried in range(1, tries + 1):
            left = deadline - time.perf_counter()
            if left <= 0:  # no try starts past the deadline: this one goes to the background
                self._append_later(event) if keep else self.log.submit(event)
                return False
            if left > INLINE_BOUND_S and self._inline:  # bounded by itself well inside the deadline
                try:
                    await self.log.append(event)
                    return None
                except AuditUnavailable:
                    pass
            else:
                task = asyncio.ensure_future(self.log.append(event))
                if not await _done_within(task, left):  # under way: it may land yet (on failure: again)
                    self._watch(task, event, keep=keep)
                    return False
                fault = task.exception()
                if fault is None:
                    return None
                if not isinstance(fault, AuditUnavailable):
                    raise fault
            if tried == tries or deadline - time.perf_counter() <= pause:
                break
            await asyncio.sleep(pause)
            pause = min(pause * 2, _BACKOFF_S[1])
        if keep:
            self._append_later(event)
        return True

    def _watch(self, task: asyncio.Future[None], event: AuditEvent, *, keep: bool) -> None:
        self._late.add(task)

        def landed(done: asyncio.Future[None]) -> None:
            self._late.discard(done)
            failed = done.cancelled() or done.exception() is not None
            if failed and keep:
                self._append_later(event)

        task.add_done_callback(landed)

    def _append_later(self, event: AuditEvent) -> None:
        """Append in the background until the log takes it: the record of a call that ran."""
        if len(self._late) >= LATE_RECORDS_MAX:
            logger.error("an audit record of a call that ran was dropped: %d wait already", len(self._late))
            return
        task = asyncio.get_running_loop().create_task(self._keep_appending(event))
        self._late.add(task)
        task.add_done_callback(self._late.discard)

    async def _keep_appending(self, event: AuditEvent) -> None:
        pause = _BACKOFF_S[0]
        while True:
            try:
                await self.log.append(event)
            except AuditUnavailable:
                await asyncio.sleep(pause)
                pause = min(pause * 2, _BACKOFF_S[1])
                continue
            return

    async def drain(self) -> None:
        """Wait (a while) for records still being appended; call before closing the database."""
        if not self._late:
            return
        _, pending = await asyncio.wait(set(self._late), timeout=DRAIN_S)
        for task in pending:
            task.cancel()
        if pending:
            logger.error("%d audit records of calls that ran were not written before shutdown", len(pending))

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
        if note.guardrails is not None:
            details["guardrails"] = note.guardrails
        if note.resume is not None:
            details["resume"] = note.resume
        if note.upstream_credential is not None:
            details["upstream"] = note.upstream_credential  # a key named *credential would be redacted
        if result is not None:
            details["duration_ms"] = round(result.metrics.duration_ms, 1)  # what `slow_requests` ranks
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


async def _done_within(task: asyncio.Future[None], seconds: float) -> bool:
    """Whether `task` is done within `seconds`; it is never cancelled (a lighter `asyncio.wait`)."""
    if task.done():
        return True
    loop = asyncio.get_running_loop()
    waiter: asyncio.Future[None] = loop.create_future()

    def wake(_: object = None) -> None:
        if not waiter.done():
            waiter.set_result(None)

    task.add_done_callback(wake)
    timer = loop.call_later(seconds, wake)
    try:
        await waiter
    finally:
        timer.cancel()
        task.remove_done_callback(wake)
    return task.done()


def _fault_outcome(fault: str | None) -> str:
    return "cancelled" if fault == "CancelledError" else "fault"


def _withheld(call: Call, note: DecisionNote, result: CallResult, failed: bool) -> CallResult:
    """The answer in place of a result whose record is not durable (see the module's docstring)."""
    dispatch = note.dispatch
    why = "failed while recording it" if failed else "did not record it before the deadline"
    if dispatch is None:
        code = "R-CAP-STORE-UNAVAILABLE" if failed else "R-TIMEOUT-STORE"
        message = f"the gateway's audit log {why}, so the call was not answered; it did not run"
        return _not_run(call, code, message)
    code = "R-CAP-STORE-UNRECORDED" if failed else "R-TIMEOUT-UNRECORDED"
    withheld = {"withheld_status": result.status.value}
    if dispatch.keyed or dispatch.repeatable:
        again = "with the same idempotency key" if dispatch.keyed else "(the tool is safe to run again)"
        status, err = error(
            code,
            f"the call ran, but the gateway's audit log {why}; its result is withheld. "
            f"Its effect may have happened: send it again {again}",
            retry_after_ms=RETRY_AFTER_MS,
            **withheld,
        )
    else:
        status, err = error(
            EFFECT_UNKNOWN_NO_KEY,
            f"'{call.request.tool_id[:128]}' ran, but the gateway's audit log {why}, so its result is "
            "withheld; it is not idempotent and the call had no idempotency_key, so repeating it could "
            "repeat its effect",
            cause=code,
            **withheld,
        )
    # What the call did to the world stays stated, so the caller knows an effect may have happened.
    answer = call.result(status, error=err)
    return answer.model_copy(update={"provenance": None, "side_effects": result.side_effects})


def _not_run(call: Call, code: str, message: str) -> CallResult:
    status, err = error(code, message, retry_after_ms=RETRY_AFTER_MS)
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
