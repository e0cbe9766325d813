"""`ToolCorpus`: the tools a router chooses from, as documents plus the index that retrieves them.

The router needs more than search hits: a tool's server (for the per-API cap) and tags (for
domain boosts). Keeping documents and index behind one writer lock means the two never disagree
about which tools exist, whether the tools come from the catalog or from a benchmark file.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Iterable, KeysView

from colonnade.routing.documents import ToolDoc
from colonnade.routing.index import Hit, IndexConfig, ToolIndex

__all__ = ["ToolCorpus"]


class ToolCorpus:
    """Documents by id and their retrieval index, changed together."""

    def __init__(self, index: ToolIndex | None = None) -> None:
        self.index = index if index is not None else ToolIndex()
        self._docs: dict[str, ToolDoc] = {}
        self.lock = threading.RLock()

    @classmethod
    def from_docs(cls, docs: Iterable[ToolDoc], config: IndexConfig | None = None) -> ToolCorpus:
        corpus = cls(ToolIndex(config))
        corpus.upsert(docs)
        return corpus

    def upsert(self, docs: Iterable[ToolDoc]) -> None:
        """Add or replace documents and index them."""
        batch = list(docs)
        if not batch:
            return
        with self.lock:
            self.index.upsert(batch)
            self._docs.update((doc.id, doc) for doc in batch)

    def register(self, docs: Iterable[ToolDoc]) -> None:
        """Know documents the index already holds (loaded from disk), without indexing them again."""
        with self.lock:
            self._docs.update((doc.id, doc) for doc in docs)

    def remove(self, ids: Iterable[str]) -> None:
        gone = [i for i in ids if i in self._docs or i in self.index]
        if not gone:
            return
        with self.lock:
            self.index.remove(gone)
            for tool_id in gone:
                self._docs.pop(tool_id, None)

    def search(self, query: str, k: int, *, allowed: Collection[str] | None = None) -> list[Hit]:
        """Index hits for known documents only (the index may hold entries not yet reconciled)."""
        with self.lock:  # a save in another thread compacts the index first
            hits = self.index.search(query, k, allowed=allowed)
        return [hit for hit in hits if hit.id in self._docs]

    def doc(self, tool_id: str) -> ToolDoc | None:
        return self._docs.get(tool_id)

    def ids(self) -> KeysView[str]:
        return self._docs.keys()

    def __len__(self) -> int:
        return len(self._docs)

    def __contains__(self, tool_id: object) -> bool:
        return tool_id in self._docs
