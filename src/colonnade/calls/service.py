"""The one entry point every surface uses: resolve the tool, then run the pipeline."""

from __future__ import annotations

import time

from colonnade.calls.call import Call
from colonnade.calls.envelope import CallMetrics, CallRequest, CallResult
from colonnade.calls.errors import error
from colonnade.calls.pipeline import Pipeline
from colonnade.catalog.catalog import Catalog

__all__ = ["CallService"]


class CallService:
    """Turns a CallRequest into a CallResult; never raises for a well-formed request."""

    def __init__(self, catalog: Catalog, pipeline: Pipeline) -> None:
        self.catalog = catalog
        self.pipeline = pipeline

    async def call(self, request: CallRequest) -> CallResult:
        started = time.perf_counter()
        tool = self.catalog.get(request.tool_id)
        if tool is None:
            status, err = error(
                "I-REQ-UNKNOWN-TOOL", f"no tool named '{request.tool_id}'", tool_id=request.tool_id
            )
            return CallResult(
                call_id=request.call_id,
                status=status,
                error=err,
                metrics=CallMetrics(duration_ms=round((time.perf_counter() - started) * 1000, 3)),
            )
        return await self.pipeline.run(Call.start(request, tool))
