"""The authorization decision of the call in progress, for the audit stage to record.

The audit stage wraps the stages that decide (it runs right after observe), so it cannot read
their decision from the call, which only flows inward. It opens a note in a context variable of
the call's task; the authorize stage writes the tool and its decision into it. Calls that never
reach authorization (an unknown name, a malformed version) leave the note empty. The policy and
attestation stages add what they decided and verified, for the same record; a call that commits,
discards or resumes a parked call adds which parked call and whether it was admitted.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from colonnade.catalog.tool import Tool
from colonnade.governance.authorization import Decision

__all__ = [
    "DecisionNote",
    "note_attestation",
    "note_decision",
    "note_policy",
    "note_resume",
    "taking_note",
]


@dataclass(slots=True)
class DecisionNote:
    tool: Tool | None = None
    decision: Decision | None = None
    policy: dict[str, Any] | None = None
    attestation: dict[str, Any] | None = None
    resume: dict[str, Any] | None = None


_NOTE: ContextVar[DecisionNote | None] = ContextVar("colonnade_decision_note", default=None)


def note_decision(tool: Tool, decision: Decision) -> None:
    note = _NOTE.get()
    if note is not None:
        note.tool, note.decision = tool, decision


def note_policy(decision: dict[str, Any]) -> None:
    note = _NOTE.get()
    if note is not None:
        note.policy = decision


def note_attestation(attestation: dict[str, Any]) -> None:
    note = _NOTE.get()
    if note is not None:
        note.attestation = attestation


def note_resume(resume: dict[str, Any]) -> None:
    note = _NOTE.get()
    if note is not None:
        note.resume = resume


@contextmanager
def taking_note() -> Iterator[DecisionNote]:
    note = DecisionNote()
    token = _NOTE.set(note)
    try:
        yield note
    finally:
        _NOTE.reset(token)
