"""Input validation: every violation of the tool's input schema, listed with its JSON pointer."""

from __future__ import annotations

from colonnade.calls.call import Call
from colonnade.calls.call_errors import error
from colonnade.calls.envelope import CallResult
from colonnade.calls.pipeline import Next
from colonnade.calls.schema_validation import violations

__all__ = ["InputValidation", "schema_refusal"]


def schema_refusal(call: Call) -> CallResult | None:
    """The `I-REQ-SCHEMA` answer to arguments the tool's input schema rejects; None when they fit."""
    found = violations(call.tool.input_schema, call.request.input)
    if not found:
        return None
    summary = "; ".join(f"{v.pointer or '/'}: {v.message}" for v in found[:5])
    status, err = error(
        "I-REQ-SCHEMA",
        f"{len(found)} argument problem(s) for '{call.tool.canonical_name}': {summary}",
        violations=[v.to_dict() for v in found],
    )
    return call.result(status, error=err)


class InputValidation:
    async def __call__(self, call: Call, next: Next) -> CallResult:
        refusal = schema_refusal(call)
        return refusal if refusal is not None else await next(call)
