"""`join_record`: a durable write joins the audit record of its own call only, and only when an audit
stage whose records go through a group commit has opened the call's note for it."""

from __future__ import annotations

from colonnade.calls.decision_note import join_record, taking_note
from colonnade.calls.envelope import CallResult


async def _durable() -> CallResult | None:
    return None


def test_a_write_joins_only_its_own_calls_record_when_the_audit_stage_takes_joint_writes() -> None:
    assert not join_record("call-1", _durable)  # no audit stage around it: it writes itself
    with taking_note() as note:
        assert not join_record("call-1", _durable)  # the audit stage takes no joint writes (SQLite)
        note.joint, note.joint_call = [], "call-1"
        assert not join_record("call-2", _durable)  # a nested call's write does not join this record
        assert join_record("call-1", _durable)
        assert note.joint == [_durable]
        note.joint = None  # handed over: later writes write themselves
        assert not join_record("call-1", _durable)
