"""Two-phase commit for side-effectful tools that opt in (`runtime.two_phase` in the contract).

Phase 1 runs the tool itself (it prepares: a hold, a draft, a reservation) and answers
`success_prep` with a commit token: the call is parked with the reason `prepared`. Committing
resumes it by running the contract's commit operation; its owner may instead discard it, which
runs the compensate operation at once, as does a token not committed before its deadline. Only
the principal that prepared the call may commit or discard it, in its tenant, and only while it
may still call the tool (`calls/resume_authority.py`); a refusal leaves the token to its owner.
The follow-ups run through the full pipeline, as the gateway itself, with an idempotency key
derived from the token, so a retried commit or compensation is executed once; the parked call is
resumed or discarded at most once (`calls/parking.py`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from colonnade.calls.call import Call
from colonnade.calls.call_errors import error
from colonnade.calls.envelope import CallConstraints, CallRequest, CallResult, CallStatus
from colonnade.calls.parking import ParkedCalls, ParkReason
from colonnade.calls.resume_authority import ParkedOwner, ResumeAuthority
from colonnade.catalog.catalog import Catalog
from colonnade.catalog.tool import Tool
from colonnade.governance.principal import Principal
from colonnade.store.parked_calls_repo import ParkedRecord

__all__ = ["TwoPhaseCoordinator"]

Runner = Callable[[CallRequest, Principal], Awaitable[CallResult]]
_TWO_PHASE = Principal.system("two-phase")
"""Commits and rollbacks run as the gateway itself (once the committer is admitted): a token's follow-up
keys do not depend on who commits."""
# How a parked call's state reads to a client holding a commit token.
_TOKEN_STATES = {
    "resuming": "committing",
    "resumed": "committed",
    "expiring": "rolling back",
    "expired": "rolled_back",
    "failed": "failed",
}


class TwoPhaseCoordinator:
    """The `prepared` reason's handler of parked calls: prepare, commit, compensate."""

    def __init__(
        self, catalog: Catalog, parked: ParkedCalls, authority: ResumeAuthority | None = None
    ) -> None:
        self.catalog = catalog
        self.parked = parked
        self.authority = authority if authority is not None else ResumeAuthority(catalog, None)
        self._run: Runner | None = None
        parked.register(ParkReason.PREPARED, self)

    def bind(self, run: Runner) -> None:
        """The call entry point used for commit and compensate operations (`CallService.call`)."""
        self._run = run

    async def prepare(self, call: Call, result: CallResult) -> CallResult:
        spec = call.tool.runtime.two_phase
        assert spec is not None
        record = await self.parked.park(
            call, ParkReason.PREPARED, payload=result.output, window_ms=spec.window_ms
        )
        warning = f"prepared: commit with POST /v1/calls/commit before {record.deadline.isoformat()}"
        return result.model_copy(
            update={
                "status": CallStatus.SUCCESS_PREP,
                "commit_token": record.token,
                "warnings": [*result.warnings, warning],
            }
        )

    async def commit(self, token: str, *, principal: Principal, call_id: str | None = None) -> CallResult:
        """Phase 2: finalize what phase 1 prepared (once, before its deadline, by its owner)."""
        return await self.parked.resume(token, ParkReason.PREPARED, call_id=call_id, principal=principal)

    async def discard(self, token: str, *, principal: Principal, call_id: str | None = None) -> CallResult:
        """The owner gives up a prepared call: its compensation runs now, and the token is spent."""
        taken = await self.parked.discard(token, ParkReason.PREPARED, call_id=call_id, principal=principal)
        if isinstance(taken, CallResult):
            return taken
        result = await self._follow_up(taken, "compensate", call_id)
        if result.status is CallStatus.SUCCESS or _already_gone(result):
            await self.parked.expired(token)
        return result  # a failed compensation is tried again by the sweep, after the deadline

    async def sweep(self) -> int:
        """Roll back every prepared call past its deadline (the parked calls' one sweep)."""
        return await self.parked.sweep()

    # -- the ParkingHandler of prepared calls ------------------------------------------------

    async def admit(
        self, parked: ParkedRecord, principal: Principal, call_id: str | None, doing: str
    ) -> CallResult | None:
        action = "commit" if doing == "resume" else doing
        return await self.authority.check(
            ParkedOwner.of(parked), principal, doing=action, call_id=call_id, input=parked.input
        )

    async def resume(self, parked: ParkedRecord, *, call_id: str | None, principal: Principal) -> CallResult:
        return await self._follow_up(parked, "commit", call_id)

    def refused(self, parked: ParkedRecord | None, token: str, why: str, call_id: str | None) -> CallResult:
        state = _TOKEN_STATES.get(why, why)
        status, err = error(
            "P-PRECOND-COMMIT-TOKEN",
            f"commit token is {state}; it cannot be committed or discarded",
            state=state,
        )
        return CallResult(call_id=call_id or token, status=status, error=err)

    async def expire(self, parked: ParkedRecord) -> bool:
        result = await self._follow_up(parked, "compensate", None)
        return result.status is CallStatus.SUCCESS or _already_gone(result)

    async def _follow_up(self, record: ParkedRecord, phase: str, call_id: str | None) -> CallResult:
        prepared_tool = self.catalog.tool_versions(record.tool).get(record.version)
        spec = prepared_tool.runtime.two_phase if prepared_tool is not None else None
        operation = None
        if spec is not None:
            operation = spec.commit_operation if phase == "commit" else spec.compensate_operation
        target = _sibling(self.catalog, record, operation) if operation else None
        if target is None or self._run is None:
            status, err = error(
                "S-TOOL-CONFIG",
                f"the {phase} operation of {record.tool} {record.version} is not in the catalog",
            )
            return CallResult(call_id=call_id or record.token, status=status, error=err)
        request = CallRequest(
            tool_id=target.canonical_name,
            tool_version=record.version,
            input=_arguments_for(target, record),
            constraints=CallConstraints(idempotency_key=f"{phase}:{record.token}"),
        )
        if call_id is not None:
            request = request.model_copy(update={"call_id": call_id})
        return await self._run(request, _TWO_PHASE)


def _sibling(catalog: Catalog, record: ParkedRecord, operation: str) -> Tool | None:
    tenant, api, _ = record.tool.split(":", 2)
    for versions in _all_versions(catalog, tenant, api):
        if versions.operation == operation and versions.version == record.version:
            return versions
    return None


def _all_versions(catalog: Catalog, tenant: str, api: str) -> list[Tool]:
    found: list[Tool] = []
    for tool in catalog.tools():
        if tool.tenant == tenant and tool.api == api:
            found.extend(catalog.tool_versions(tool.canonical_name).values())
    return found


def _arguments_for(target: Tool, record: ParkedRecord) -> dict[str, Any]:
    """The target's arguments, taken from the prepared output first, then the original input."""
    properties = (target.input_schema.get("properties") or {}).keys()
    prepared = record.payload if isinstance(record.payload, dict) else {}
    return {
        name: prepared.get(name, record.input.get(name))
        for name in properties
        if name in prepared or name in record.input
    }


def _already_gone(result: CallResult) -> bool:
    """A hold the backend no longer knows (404) or already released (409) needs no compensation."""
    code = result.error.code if result.error is not None else ""
    return code in ("I-REQ-UPSTREAM-NOT-FOUND", "P-PRECOND-CONFLICT")
