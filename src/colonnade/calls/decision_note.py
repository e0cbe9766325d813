"""The authorization decision of the call in progress, for the audit stage to record.

The audit stage wraps the stages that decide (it runs right after observe), so it cannot read
their decision from the call, which only flows inward. It opens a note in a context variable of
the call's task; the authorize stage writes the tool and its decision into it. Calls that never
reach authorization (an unknown name, a malformed version) leave the note empty. The policy and
attestation stages add what they decided and verified, for the same record; a call that commits,
discards or resumes a parked call adds which parked call and whether it was admitted.

What the audit and drain stages must know to answer a call whose record or run was cut short is
noted too: the call's resolved deadline (the deadline check), whether it was handed to its backend
and could run again without a second effect (the execute stage), and the "effect unknown" outcome
the idempotency stage recorded for its key when the call was interrupted.

Where the audit log joins a group commit (PostgreSQL), the note also carries the call's other
durable writes that may wait for its record (`join_record`: the idempotency outcome), so the audit
stage sends them to the database with the record, in one commit instead of one each.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from colonnade.calls.envelope import CallResult
from colonnade.catalog.tool import Tool
from colonnade.governance.authorization import Decision

__all__ = [
    "DecisionNote",
    "Dispatch",
    "JointWrite",
    "current_note",
    "join_record",
    "note_attestation",
    "note_deadline",
    "note_decision",
    "note_dispatch",
    "note_effect_unknown",
    "note_guardrails",
    "note_policy",
    "note_resume",
    "note_upstream_credential",
    "taking_note",
]


@dataclass(frozen=True, slots=True)
class Dispatch:
    """The call was handed to its backend: an effect may have happened.

    `keyed`: it carries an idempotency key (a resend is told apart from a new call); `repeatable`:
    running it again cannot add a second effect (pure, idempotent, deduplicating, or the gateway's own).
    """

    keyed: bool
    repeatable: bool


JointWrite = Callable[[], Awaitable[CallResult | None]]
"""Writes one durable write of the call; returns None once it is durable, else the answer instead."""


@dataclass(slots=True)
class DecisionNote:
    tool: Tool | None = None
    decision: Decision | None = None
    policy: dict[str, Any] | None = None
    attestation: dict[str, Any] | None = None
    resume: dict[str, Any] | None = None
    deadline: float | None = None
    """The resolved call's deadline (`time.perf_counter()` clock)."""
    dispatch: Dispatch | None = None
    effect_unknown: CallResult | None = None
    upstream_credential: dict[str, Any] | None = None
    """The mode and upstream subject the call's backend was sent (never a token)."""
    guardrails: dict[str, Any] | None = None
    """The guardrails' findings (kind, path, count: never a value) and the actions taken."""
    joint: list[JointWrite] | None = None
    """None, or (an audit stage whose records join a group commit) the writes sent with the record."""
    joint_call: str | None = None
    """The call_id whose record the joint writes go with (a nested call's writes do not join it)."""


_NOTE: ContextVar[DecisionNote | None] = ContextVar("colonnade_decision_note", default=None)


def note_decision(tool: Tool, decision: Decision) -> None:
    note = _NOTE.get()
    if note is not None:
        note.tool, note.decision = tool, decision


def note_upstream_credential(credential: dict[str, Any]) -> None:
    note = _NOTE.get()
    if note is not None:
        note.upstream_credential = credential


def note_policy(decision: dict[str, Any]) -> None:
    note = _NOTE.get()
    if note is not None:
        note.policy = decision


def note_guardrails(guardrails: dict[str, Any]) -> None:
    note = _NOTE.get()
    if note is not None:
        note.guardrails = guardrails


def note_attestation(attestation: dict[str, Any]) -> None:
    note = _NOTE.get()
    if note is not None:
        note.attestation = attestation


def note_resume(resume: dict[str, Any]) -> None:
    note = _NOTE.get()
    if note is not None:
        note.resume = resume


def note_deadline(deadline: float) -> None:
    note = _NOTE.get()
    if note is not None:
        note.deadline = deadline


def note_dispatch(dispatch: Dispatch) -> None:
    note = _NOTE.get()
    if note is not None:
        note.dispatch = dispatch


def note_effect_unknown(result: CallResult) -> None:
    note = _NOTE.get()
    if note is not None:
        note.effect_unknown = result


def join_record(call_id: str, write: JointWrite) -> bool:
    """Hand `write` to the audit stage, to go with the call's record; False: write it yourself.

    The audit stage starts it with the record and waits for both before answering."""
    note = _NOTE.get()
    if note is None or note.joint is None or note.joint_call != call_id:
        return False
    note.joint.append(write)
    return True


def current_note() -> DecisionNote | None:
    """The note of the call this task runs (None outside the audit stage)."""
    return _NOTE.get()


@contextmanager
def taking_note() -> Iterator[DecisionNote]:
    note = DecisionNote()
    token = _NOTE.set(note)
    try:
        yield note
    finally:
        _NOTE.reset(token)
