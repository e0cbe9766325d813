"""Deadline: a call whose absolute deadline has already passed is refused before anything is spent on it.

`constraints.deadline_unix_ms` is a point in time. One that is not in the future (a stale value, a
clock far behind, or 0, the epoch) leaves the call no time at all: dispatching it could only end
in a timeout answered "retryable", and sending the same request again fails the same way. So it
is refused here, right after authorization (a caller learns nothing of tools it may not call),
with `I-REQ-DEADLINE-PASSED`, whose fix says to send a future deadline or a `timeout_ms`.
"""

from __future__ import annotations

import time

from colonnade.calls.call import Call
from colonnade.calls.call_errors import error
from colonnade.calls.envelope import CallResult
from colonnade.calls.pipeline import Next

__all__ = ["DEADLINE_PASSED", "DeadlineCheck"]

DEADLINE_PASSED = "I-REQ-DEADLINE-PASSED"


class DeadlineCheck:
    async def __call__(self, call: Call, next: Next) -> CallResult:
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
