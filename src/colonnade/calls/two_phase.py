"""Two-phase commit for side-effectful tools that opt in (`runtime.two_phase` in the contract).

Phase 1 runs the tool itself (it prepares: a hold, a draft, a reservation) and answers
`success_prep` with a commit token. `commit(token)` runs the contract's commit operation; a token
not committed before its deadline is rolled back by running the compensate operation. Both run
through the full pipeline, with an idempotency key derived from the token, so a retried commit or
compensation is executed once. A token is consumed at most once (compare-and-set on its state).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from colonnade.calls.call import Call
from colonnade.calls.call_errors import error
from colonnade.calls.envelope import CallConstraints, CallRequest, CallResult, CallStatus
from colonnade.catalog.catalog import Catalog
from colonnade.catalog.tool import Tool
from colonnade.governance.principal import Principal
from colonnade.store.commit_tokens_repo import CommitTokenStore, PreparedCall

__all__ = ["MAX_COMPENSATION_ATTEMPTS", "TwoPhaseCoordinator"]

logger = logging.getLogger(__name__)
MAX_COMPENSATION_ATTEMPTS = 5
Runner = Callable[[CallRequest, Principal], Awaitable[CallResult]]
_TWO_PHASE = Principal.system("two-phase")
"""Commits and rollbacks run as the gateway itself: a token's follow-up keys do not depend on who commits."""


class TwoPhaseCoordinator:
    def __init__(self, catalog: Catalog, tokens: CommitTokenStore) -> None:
        self.catalog = catalog
        self.tokens = tokens
        self._run: Runner | None = None

    def bind(self, run: Runner) -> None:
        """The call entry point used for commit and compensate operations (`CallService.call`)."""
        self._run = run

    async def prepare(self, call: Call, result: CallResult) -> CallResult:
        spec = call.tool.runtime.two_phase
        assert spec is not None
        token = "ct_" + secrets.token_urlsafe(24)
        deadline = datetime.now(UTC) + timedelta(milliseconds=spec.window_ms)
        await self.tokens.create(
            token,
            tool=call.tool.canonical_name,
            version=call.tool.version,
            input=call.request.input,
            prepared=result.output,
            deadline=deadline,
        )
        warning = f"prepared: commit with POST /v1/calls/commit before {deadline.isoformat()}"
        return result.model_copy(
            update={
                "status": CallStatus.SUCCESS_PREP,
                "commit_token": token,
                "warnings": [*result.warnings, warning],
            }
        )

    async def commit(self, token: str, *, call_id: str | None = None) -> CallResult:
        record = await self.tokens.get(token)
        if record is None or not await self.tokens.transition(
            token, "prepared", "committing", live_only=True
        ):
            state = record.state if record is not None else "unknown"
            expired = record is not None and record.deadline <= datetime.now(UTC)
            why = "expired" if expired and state == "prepared" else state
            status, err = error(
                "P-PRECOND-COMMIT-TOKEN", f"commit token is {why}; it cannot be committed", state=why
            )
            return CallResult(call_id=call_id or token, status=status, error=err)
        result = await self._follow_up(record, "commit", call_id)
        if result.status is CallStatus.SUCCESS:
            await self.tokens.transition(token, "committing", "committed")
        else:  # the hold stays until committed again or rolled back at the deadline
            await self.tokens.transition(token, "committing", "prepared")
        return result

    async def sweep(self) -> int:
        """Roll back every prepared call past its deadline; returns how many were rolled back."""
        rolled_back = 0
        for record in await self.tokens.due():
            if record.state == "prepared" and not await self.tokens.transition(
                record.token, "prepared", "compensating"
            ):
                continue  # committed or taken by another sweeper in the meantime
            result = await self._follow_up(record, "compensate", None)
            if result.status is CallStatus.SUCCESS or _already_gone(result):
                await self.tokens.transition(record.token, "compensating", "rolled_back")
                rolled_back += 1
            elif record.attempts >= MAX_COMPENSATION_ATTEMPTS:
                await self.tokens.transition(record.token, "compensating", "failed")
                logger.error("compensation of %s failed for good: %s", record.token, result.error)
        return rolled_back

    async def run(self, interval_s: float = 1.0) -> None:
        while True:
            try:
                await self.sweep()
            except Exception:  # the store may be briefly unavailable; the next tick retries
                logger.exception("two-phase sweep failed")
            await asyncio.sleep(interval_s)

    async def _follow_up(self, record: PreparedCall, phase: str, call_id: str | None) -> CallResult:
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


def _sibling(catalog: Catalog, record: PreparedCall, operation: str) -> Tool | None:
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


def _arguments_for(target: Tool, record: PreparedCall) -> dict[str, Any]:
    """The target's arguments, taken from the prepared output first, then the original input."""
    properties = (target.input_schema.get("properties") or {}).keys()
    prepared = record.prepared if isinstance(record.prepared, dict) else {}
    return {
        name: prepared.get(name, record.input.get(name))
        for name in properties
        if name in prepared or name in record.input
    }


def _already_gone(result: CallResult) -> bool:
    """A hold the backend no longer knows (404) or already released (409) needs no compensation."""
    code = result.error.code if result.error is not None else ""
    return code in ("I-REQ-UPSTREAM-NOT-FOUND", "P-PRECOND-CONFLICT")
