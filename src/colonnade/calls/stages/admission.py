"""Admission: refuse at once a call that the work in front of it would make miss its deadline.

Under overload every admitted call slows down every other one (they share the event loop), so a
call that cannot finish in time only makes the others late too. This stage asks the load monitor
(`calls/load.py`) how long the requests in flight will keep the loop busy; when that exceeds the
time left before the call's deadline (less what it already waited in front of the pipeline), or
the calls in flight exceed their bound, the call ends
here with the retryable `R-CAP-OVERLOAD` and `retry_after_ms`, before any validation or backend
work is spent on it.
"""

from __future__ import annotations

from colonnade.calls.call import Call
from colonnade.calls.call_errors import error
from colonnade.calls.envelope import CallResult
from colonnade.calls.load import DEADLINE, IN_FLIGHT_LIMIT, LoadMonitor, current_arrival, queued_s
from colonnade.calls.pipeline import Next

__all__ = ["Admission"]


class Admission:
    def __init__(self, load: LoadMonitor | None = None) -> None:
        self.load = load if load is not None else LoadMonitor()

    async def __call__(self, call: Call, next: Next) -> CallResult:
        load = self.load
        load.call_entered()
        refusal = self._refusal(call)
        if refusal is not None:
            load.call_left(served=False)  # a refusal's cost says nothing of a call's
            arrival = current_arrival()
            if arrival is not None:
                arrival.refused = True
            return refusal
        try:
            return await next(call)
        finally:
            load.call_left()

    def _refusal(self, call: Call) -> CallResult | None:
        load = self.load
        if load.over_bound():
            return self._refuse(
                call,
                IN_FLIGHT_LIMIT,
                f"the gateway already has {load.max_in_flight} calls in flight",
                max_in_flight=load.max_in_flight,
            )
        if not load.shed_late:
            return None
        wait_s, remaining_s = load.predicted_wait_s(), _callers_remaining_s(call)
        if wait_s <= remaining_s:
            return None
        return self._refuse(
            call,
            DEADLINE,
            f"the work in front of this call would take about {wait_s * 1000:.0f} ms,"
            f" past its deadline in {remaining_s * 1000:.0f} ms",
            predicted_wait_ms=round(wait_s * 1000, 1),
            remaining_ms=round(remaining_s * 1000, 1),
        )

    def _refuse(self, call: Call, reason: str, message: str, **details: object) -> CallResult:
        load = self.load
        load.record_shed(reason)
        status, err = error(
            "R-CAP-OVERLOAD",
            message,
            reason=reason,
            retry_after_ms=load.retry_after_ms(),
            in_flight=load.in_flight,
            **details,
        )
        return call.result(status, error=err)


def _callers_remaining_s(call: Call) -> float:
    """Time left as the caller counts it: a relative timeout started when the request arrived,
    not when the pipeline began; an absolute deadline already counts the wait in front."""
    if call.request.constraints.deadline_unix_ms is not None:
        return call.remaining_s
    return call.remaining_s - queued_s(call.started)
