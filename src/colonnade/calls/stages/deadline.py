"""Deadline: a call whose absolute deadline has already passed is refused before anything is spent on it.

`constraints.deadline_unix_ms` is a point in time. One that is not in the future (a stale value, a
clock far behind, or 0, the epoch) leaves the call no time at all: dispatching it could only end
in a timeout answered "retryable", and sending the same request again fails the same way. So it
is refused here, right after authorization (a caller learns nothing of tools it may not call),
with `I-REQ-DEADLINE-PASSED`, whose fix says to send a future deadline or a `timeout_ms`.

A call that passes has its resolved deadline noted for the audit stage, which sees only the call
as it entered the pipeline. The backend gets the call's time left less a reserve
(`execution_time_left`): a deadline is for the answer, and the outcome and the audit record must be
made durable within it too, on a slow database as on a fast one; a backend that times out then
leaves the gateway the time to record what is known, and the same timed-out call gets the same
answer on SQLite and PostgreSQL.
"""

from __future__ import annotations

import time

from colonnade.calls.call import Call
from colonnade.calls.call_errors import error
from colonnade.calls.decision_note import note_deadline
from colonnade.calls.envelope import CallResult
from colonnade.calls.pipeline import Next

__all__ = ["DEADLINE_PASSED", "RECORD_RESERVE", "DeadlineCheck", "execution_time_left", "record_reserve_s"]

DEADLINE_PASSED = "I-REQ-DEADLINE-PASSED"
RECORD_RESERVE = (0.1, 0.05)
"""The share of a call's time kept for recording its outcome, and the most it keeps (seconds)."""


def record_reserve_s(call: Call) -> float:
    """What of the call's time its records may take: a tenth of it, at most 50 ms."""
    share, most = RECORD_RESERVE
    return min(most, share * max(0.0, call.deadline - call.started))


def execution_time_left(call: Call) -> float:
    """The time the backend may take: what is left before the deadline, less the record reserve."""
    return max(0.0, call.remaining_s - record_reserve_s(call))


class DeadlineCheck:
    async def __call__(self, call: Call, next: Next) -> CallResult:
        note_deadline(call.deadline)
        deadline = call.request.constraints.deadline_unix_ms
        if deadline is None:
            return await next(call)
        now = round(time.time() * 1000)
        if deadline > now:
            return await next(call)
        status, err = error(
            DEADLINE_PASSED,
            f"constraints.deadline_unix_ms {deadline} is {now - deadline} ms in the past; "
            "the call was not sent, and sending it again as is cannot succeed",
            deadline_unix_ms=deadline,
            now_unix_ms=now,
        )
        return call.result(status, error=err)
