"""Output redaction: the fields a policy named (`redact_output_fields`) never leave the gateway.

It comes right after the policy stage and so wraps everything that may produce an output
(idempotent replays, commits, retried executions): whatever comes back is redacted on its way
out. Output validation, further in, still checks the backend's real output.
"""

from __future__ import annotations

from colonnade.calls.call import Call
from colonnade.calls.envelope import CallResult
from colonnade.calls.pipeline import Next
from colonnade.governance.policy.output_redaction import redact_paths

__all__ = ["RedactOutput"]


class RedactOutput:
    async def __call__(self, call: Call, next: Next) -> CallResult:
        result = await next(call)
        paths = call.obligations.redact_output_fields
        if not paths or result.output is None:
            return result
        return result.model_copy(update={"output": redact_paths(result.output, paths)})
