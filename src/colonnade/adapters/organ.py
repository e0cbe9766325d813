"""The `organ` adapter: runs an organ function in the gateway's process ("embedded").

The organ is imported on its first call (the catalog was built from its cards); each call is a
stimulus with the call's ids, the caller, the time left, the scoped idempotency key and the
organ's own data folder. The organ's failure vocabulary maps onto the call taxonomy, so an organ
failure reads like any backend's; the CPU the organ spent becomes the result's `metrics.cpu_ms`.
"""

from __future__ import annotations

from colonnade.adapters.outcome import (
    CONFLICT,
    MISCONFIGURED,
    NOT_FOUND,
    REJECTED,
    SCHEMA,
    TIMEOUT,
    UNAVAILABLE,
    AdapterOutcome,
    OutcomeKind,
)
from colonnade.adapters.registry import Invocation
from colonnade.catalog.bindings import OrganBinding
from colonnade.organs import stimulus as organ
from colonnade.organs.dispatch import send
from colonnade.organs.loading import OrganHost
from colonnade.organs.organ_errors import OrganLoadError
from colonnade.organs.stimulus import Response, Stimulus, StimulusContext

__all__ = ["ORGAN_FAULT", "ORGAN_LOAD", "ORGAN_UNSUPPORTED", "OrganAdapter", "outcome_of"]

ORGAN_LOAD = "S-TOOL-ORGAN-LOAD"
ORGAN_UNSUPPORTED = "S-TOOL-ORGAN-UNSUPPORTED"
ORGAN_FAULT = "S-TOOL-ORGAN-FAULT"

_CODES = {
    organ.UNSUPPORTED_OPERATION: ORGAN_UNSUPPORTED,
    organ.INVALID_INPUT: SCHEMA,
    organ.NOT_FOUND: NOT_FOUND,
    organ.CONFLICT: CONFLICT,
    organ.REJECTED: REJECTED,
    organ.UNAVAILABLE: UNAVAILABLE,
    organ.TIMEOUT: TIMEOUT,
    organ.INTERNAL: ORGAN_FAULT,
    organ.UNLOADABLE: ORGAN_LOAD,
}


def outcome_of(response: Response) -> AdapterOutcome:
    """An organ's response as an adapter outcome (an unknown failure code counts as the organ's fault)."""
    if response.ok:
        return AdapterOutcome(
            OutcomeKind.SUCCESS, body=response.output, duration_ms=response.latency_ms, cpu_ms=response.cpu_ms
        )
    failure = response.error
    code = _CODES.get(failure.code, ORGAN_FAULT) if failure is not None else ORGAN_FAULT
    details = {"organ_error": failure.code, **failure.details} if failure is not None else {}
    return AdapterOutcome(
        OutcomeKind.RETRYABLE_ERROR if code.startswith("R-") else OutcomeKind.TERMINAL_ERROR,
        error_code=code,
        message=failure.message if failure is not None else "the organ answered ok=false without an error",
        duration_ms=response.latency_ms,
        details=details,
        cpu_ms=response.cpu_ms,
    )


class OrganAdapter:
    def __init__(self, host: OrganHost) -> None:
        self.host = host

    async def execute(self, invocation: Invocation) -> AdapterOutcome:
        binding = invocation.tool.binding
        if not isinstance(binding, OrganBinding):
            return AdapterOutcome(
                OutcomeKind.TERMINAL_ERROR,
                error_code=MISCONFIGURED,
                message=f"'{invocation.tool.canonical_name}' has no organ binding",
            )
        try:
            target = await self.host.organ(binding.organ)
        except OrganLoadError as exc:
            return AdapterOutcome(OutcomeKind.TERMINAL_ERROR, error_code=ORGAN_LOAD, message=str(exc))
        stimulus = Stimulus(
            op=binding.op, input=invocation.arguments, context=context_of(invocation, self.host)
        )
        return outcome_of(await send(target, stimulus, timeout_s=invocation.timeout_s))

    async def aclose(self) -> None:
        return None


def context_of(invocation: Invocation, host: OrganHost, organ_name: str | None = None) -> StimulusContext:
    binding = invocation.tool.binding
    name = organ_name or (binding.organ if isinstance(binding, OrganBinding) else "")
    return StimulusContext(
        call_id=invocation.call_id,
        trace_id=invocation.trace_id,
        principal_id=invocation.principal.key,
        tenant=invocation.principal.tenant,
        timeout_s=invocation.timeout_s,
        data_dir=host.folder_for(name) if name else None,
        idempotency_key=invocation.idempotency_key,
    )
