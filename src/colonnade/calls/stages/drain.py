"""Drain: when the gateway stops, calls in flight get a time limit, then a retryable answer.

A graceful stop lets running calls finish; `cut()` (the server calls it when the drain time is
up, or at once on a second stop signal) ends those still running with `R-CAP-SHUTTING-DOWN`,
so their callers learn to retry instead of waiting on a process that is going away, and refuses
any call that arrives afterwards. Each call runs under an `asyncio.timeout` with no deadline;
cutting reschedules those to now, which cancels the work below this stage the way a timeout
would (the task itself is not cancelled, so the surface still sends the answer).

A cut call that may have acted and cannot safely run again is not answered "retry": its answer
is the one its resend will get. With an idempotency key that is the `S-TOOL-EFFECT-UNKNOWN` the
idempotency stage recorded for the key as the call was cut (noted for this stage); without one,
`S-TOOL-EFFECT-UNKNOWN-NO-KEY`. A call cut before it reached its backend, or one that is safe to
run again, stays `R-CAP-SHUTTING-DOWN`.
"""

from __future__ import annotations

import asyncio

from colonnade.calls.call import Call
from colonnade.calls.call_errors import error
from colonnade.calls.decision_note import current_note
from colonnade.calls.envelope import CallResult
from colonnade.calls.pipeline import Next
from colonnade.calls.stages.unkeyed_effects import EFFECT_UNKNOWN_NO_KEY

__all__ = ["RETRY_AFTER_MS", "Drain"]

RETRY_AFTER_MS = 1_000


class Drain:
    def __init__(self) -> None:
        self._running: set[asyncio.Timeout] = set()
        self._cut = False

    @property
    def in_flight(self) -> int:
        return len(self._running)

    @property
    def is_cut(self) -> bool:
        return self._cut

    def cut(self) -> int:
        """End every call in flight now and refuse new ones; returns how many were running."""
        self._cut = True
        now = asyncio.get_running_loop().time()
        for scope in list(self._running):
            scope.reschedule(now)
        return len(self._running)

    async def __call__(self, call: Call, next: Next) -> CallResult:
        if self._cut:
            return _stopping(call, interrupted=False)
        scope = asyncio.timeout(None)
        try:
            async with scope:
                self._running.add(scope)
                try:
                    return await next(call)
                finally:
                    self._running.discard(scope)
        except TimeoutError:
            if not scope.expired():
                raise  # a timeout of a later stage's own, not the cut
            return _cut_answer(call)


def _cut_answer(call: Call) -> CallResult:
    """What a call cut mid-flight is answered: what a resend of it would be answered."""
    note = current_note()
    if note is not None and note.effect_unknown is not None:
        recorded = note.effect_unknown
        return recorded.model_copy(update={"call_id": call.request.call_id})
    dispatch = note.dispatch if note is not None else None
    if dispatch is None or dispatch.keyed or dispatch.repeatable:
        return _stopping(call, interrupted=True)
    status, err = error(
        EFFECT_UNKNOWN_NO_KEY,
        f"the gateway is shutting down and cut the call of '{call.request.tool_id[:128]}' after it reached "
        "its backend; it is not idempotent and had no idempotency_key, so whether it took effect is unknown",
        cause="R-CAP-SHUTTING-DOWN",
        interrupted=True,
    )
    return call.result(status, error=err)


def _stopping(call: Call, *, interrupted: bool) -> CallResult:
    what = "was stopped before it finished" if interrupted else "was refused"
    status, err = error(
        "R-CAP-SHUTTING-DOWN",
        f"the gateway is shutting down: the call of '{call.request.tool_id[:128]}' {what}",
        retry_after_ms=RETRY_AFTER_MS,
        interrupted=interrupted,
    )
    return call.result(status, error=err)
