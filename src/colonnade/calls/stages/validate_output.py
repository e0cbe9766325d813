"""Output validation: a successful result must match the tool's output schema.

It wraps execution, so it is listed just before the execute stage in the pipeline.
"""

from __future__ import annotations

from colonnade.calls.call import Call
from colonnade.calls.call_errors import error
from colonnade.calls.envelope import CallResult, CallStatus
from colonnade.calls.pipeline import Next
from colonnade.calls.schema_validation import violations

__all__ = ["OutputValidation"]


class OutputValidation:
    async def __call__(self, call: Call, next: Next) -> CallResult:
        result = await next(call)
        schema = call.tool.output_schema
        if schema is None or result.status is not CallStatus.SUCCESS:
            return result
        found = violations(schema, result.output)
        if not found:
            return result
        status, err = error(
            "D-DATA-OUTPUT-SCHEMA",
            f"the result of '{call.tool.canonical_name}' breaks its output schema at "
            f"{found[0].pointer or '/'}: {found[0].message}",
            violations=[v.to_dict() for v in found],
        )
        return call.result(status, error=err)
