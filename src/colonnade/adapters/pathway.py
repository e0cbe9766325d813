"""The `pathway` adapter: runs a declared pathway of organ functions as one call.

The call was governed as one tool (as strong as its strongest step); the steps run in-process
through the executive. Success answers `{output, steps, latency_ms, cost}`; a failed step ends
the call with that step's failure, mapped like an organ call's, and says which step it was.
"""

from __future__ import annotations

from colonnade.adapters.organ import context_of, outcome_of
from colonnade.adapters.outcome import MISCONFIGURED, AdapterOutcome, OutcomeKind
from colonnade.adapters.registry import Invocation
from colonnade.catalog.bindings import PathwayBinding
from colonnade.organs.executive import Executive
from colonnade.organs.stimulus import Response

__all__ = ["PathwayAdapter"]


class PathwayAdapter:
    def __init__(self, executive: Executive) -> None:
        self.executive = executive

    async def execute(self, invocation: Invocation) -> AdapterOutcome:
        binding = invocation.tool.binding
        if not isinstance(binding, PathwayBinding) or binding.name not in self.executive.pathways:
            return AdapterOutcome(
                OutcomeKind.TERMINAL_ERROR,
                error_code=MISCONFIGURED,
                message=f"'{invocation.tool.canonical_name}' is not a pathway this gateway serves",
            )
        result = await self.executive.run_pathway(
            binding.name,
            invocation.arguments,
            context_of(invocation, self.executive.host, organ_name=""),
            timeout_s=invocation.timeout_s,
        )
        steps = [record.model_dump(mode="json") for record in result.steps]
        if result.ok:
            body = {
                "output": result.output,
                "steps": steps,
                "latency_ms": result.latency_ms,
                "cost": result.cost,
            }
            return AdapterOutcome(
                OutcomeKind.SUCCESS, body=body, duration_ms=result.latency_ms, cpu_ms=result.cpu_ms
            )
        failed = Response(ok=False, error=result.error, latency_ms=result.latency_ms, cpu_ms=result.cpu_ms)
        outcome = outcome_of(failed)
        step = result.failed_step
        op = binding.steps[step] if step is not None and step < len(binding.steps) else None
        message = f"step {step} ({op}) failed: {outcome.message}" if op is not None else outcome.message
        details = {**(outcome.details or {}), "step": step, "op": op, "steps": steps}
        return AdapterOutcome(
            outcome.kind,
            error_code=outcome.error_code,
            message=message,
            duration_ms=result.latency_ms,
            details=details,
            cpu_ms=result.cpu_ms,
        )

    async def aclose(self) -> None:
        return None
