"""The one entry point every surface uses: resolve the tool and its version, then run the pipeline."""

from __future__ import annotations

import time
from collections.abc import Callable

from colonnade.calls.call import Call
from colonnade.calls.call_errors import error
from colonnade.calls.envelope import CallMetrics, CallRequest, CallResult
from colonnade.calls.manifest import Manifests
from colonnade.calls.pipeline import Pipeline
from colonnade.calls.two_phase import TwoPhaseCoordinator
from colonnade.calls.versions import Refusal, resolve_tool
from colonnade.catalog.catalog import Catalog

__all__ = ["CallService", "RefusalHook"]

RefusalHook = Callable[[CallRequest, CallResult], None]
"""Told about every request refused before the pipeline (unknown tool, version, digest): observability."""


class CallService:
    """Turns a CallRequest into a CallResult; never raises for a well-formed request."""

    def __init__(
        self,
        catalog: Catalog,
        pipeline: Pipeline,
        manifests: Manifests | None = None,
        two_phase: TwoPhaseCoordinator | None = None,
        on_refused: RefusalHook | None = None,
    ) -> None:
        self.catalog = catalog
        self.pipeline = pipeline
        self.on_refused = on_refused
        self.manifests = manifests or Manifests()
        self.two_phase = two_phase
        if two_phase is not None:
            two_phase.bind(self.call)

    async def call(self, request: CallRequest) -> CallResult:
        started = time.perf_counter()
        resolved = resolve_tool(self.catalog, request.tool_id, request.tool_version)
        if isinstance(resolved, Refusal):
            return self._refused(request, resolved, started)
        expected = (request.provenance or {}).get("digest")
        if expected is not None and expected != resolved.digest:
            status, err = error(
                "C-CONTRACT-DIGEST-MISMATCH",
                f"'{resolved.canonical_name}' {resolved.version} has digest {resolved.digest},"
                f" not {expected}",
                digest=resolved.digest,
            )
            return self._refused(request, Refusal(status, err), started)
        return await self.pipeline.run(Call.start(request, resolved, self.manifests.for_tool(resolved)))

    def _refused(self, request: CallRequest, refusal: Refusal, started: float) -> CallResult:
        result = _refused(request, refusal, started)
        if self.on_refused is not None:
            self.on_refused(request, result)
        return result

    async def commit(self, token: str, *, call_id: str | None = None) -> CallResult:
        """Phase 2 of a two-phase call: finalize what phase 1 prepared (once, before its deadline)."""
        if self.two_phase is None:
            status, err = error("P-PRECOND-COMMIT-TOKEN", "this gateway runs no two-phase calls")
            return CallResult(call_id=call_id or token, status=status, error=err)
        return await self.two_phase.commit(token, call_id=call_id)


def _refused(request: CallRequest, refusal: Refusal, started: float) -> CallResult:
    return CallResult(
        call_id=request.call_id,
        status=refusal.status,
        error=refusal.error,
        metrics=CallMetrics(duration_ms=round((time.perf_counter() - started) * 1000, 3)),
    )
