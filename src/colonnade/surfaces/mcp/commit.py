"""When MCP clients are shown `colonnade__commit_call` and `colonnade__discard_call` (REST has
POST /v1/calls/commit and /v1/calls/discard).

They are listed while the catalog holds a tool that opts in to two-phase commit; calling them works
for the client that prepared the call and holds its commit token (from
`_meta["colonnade/result"].commit_token`), and the call runs through the pipeline like any other
(`calls/commit_tool.py`).
"""

from __future__ import annotations

from colonnade.catalog.catalog import Catalog

__all__ = ["CommitListing"]


class CommitListing:
    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self._listed: tuple[int, bool] = (-1, False)

    def listed(self) -> bool:
        """Whether any served tool is two-phase; recomputed only when the catalog changed."""
        version, answer = self._listed
        if version != self.catalog.version:
            answer = any(tool.runtime.two_phase is not None for tool in self.catalog.tools())
            self._listed = (self.catalog.version, answer)
        return answer
