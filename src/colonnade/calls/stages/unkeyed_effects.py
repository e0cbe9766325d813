"""Unkeyed effects: a call that may have acted, cannot safely run again and has no key is not "retryable".

A side-effecting call (not pure or idempotent) that times out or loses its connection after the
request went out may have taken effect: the payment may be made. Answering that `retryable_error`
invites an agent to repeat it, and the tool-call contract says to retry only what is idempotent.
Such an outcome becomes the terminal `S-TOOL-EFFECT-UNKNOWN-NO-KEY`, whose fix says how to check
and to send an `idempotency_key` next time; the original code stays in `details.cause`. A failure
that shows the backend did not act (a 429, a 408 or 503, a capacity refusal, an open circuit)
stays retryable. Keyed calls are the idempotency stage's business and pass through untouched, as
do the gateway's own tools (a commit is keyed by its token).
"""

from __future__ import annotations

from colonnade.calls.call import Call
from colonnade.calls.call_errors import error
from colonnade.calls.envelope import CallResult, CallStatus
from colonnade.calls.pipeline import Next
from colonnade.calls.stages.idempotency import may_have_acted
from colonnade.contracts.model import Determinism

__all__ = ["EFFECT_UNKNOWN_NO_KEY", "UnkeyedEffects"]

EFFECT_UNKNOWN_NO_KEY = "S-TOOL-EFFECT-UNKNOWN-NO-KEY"
_SAFE = (Determinism.PURE, Determinism.IDEMPOTENT)


class UnkeyedEffects:
    async def __call__(self, call: Call, next: Next) -> CallResult:
        result = await next(call)
        retryable = result.status is CallStatus.RETRYABLE_ERROR
        if not retryable or not _guarded(call) or not may_have_acted(result):
            return result
        cause = result.error
        assert cause is not None, "a retryable result always carries an error"
        status, err = error(
            EFFECT_UNKNOWN_NO_KEY,
            f"'{call.tool.canonical_name}' failed after its backend may have acted ({cause.code}: "
            f"{cause.message}); it is not idempotent and the call had no idempotency_key, so whether it "
            "took effect is unknown and repeating it could repeat the effect",
            **{**cause.details, "cause": cause.code},
        )
        return result.model_copy(update={"status": status, "error": err})


def _guarded(call: Call) -> bool:
    """A backend call whose repeat could add a second effect, sent without a key to tell repeats apart."""
    return (
        call.request.constraints.idempotency_key is None
        and not call.tool.builtin
        and call.manifest.determinism not in _SAFE
    )
