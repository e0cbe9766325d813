"""Keep the router's corpus in step with the catalog, incrementally, and persisted when embedded.

Every catalog change re-indexes only the tools it added, updated or removed. The embedded default
saves the index under the data directory with a manifest of document digests, so a restart loads
it and re-indexes only what changed while the gateway was down, instead of rebuilding it all.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
from collections.abc import Awaitable, Iterable
from pathlib import Path

from colonnade.catalog.catalog import Catalog, CatalogChange
from colonnade.catalog.tool import Tool
from colonnade.routing.corpus import ToolCorpus
from colonnade.routing.documents import ToolDoc, doc_from_tool
from colonnade.routing.index import IndexConfig, ToolIndex

__all__ = ["CatalogIndex"]

logger = logging.getLogger(__name__)

INDEX_FILE = "tools_index.npz"
MANIFEST_FILE = "tools.manifest.json"
_FORMAT = "colonnade.tool_manifest/1"


class CatalogIndex:
    """The catalog's tools as a `ToolCorpus`; `directory` (optional) is where it is persisted."""

    def __init__(
        self, catalog: Catalog, *, directory: Path | None = None, config: IndexConfig | None = None
    ) -> None:
        self.catalog = catalog
        self.directory = directory
        self.config = config or IndexConfig()
        index, self._digests = self._load()
        self.corpus = ToolCorpus(index)
        self.dirty = False
        self._save_lock = asyncio.Lock()
        self._apply(catalog.tools(), ())
        self._unsubscribe = catalog.subscribe(self._on_change)

    def reconcile(self) -> None:
        """Drop indexed tools the catalog no longer serves (e.g. removed while the gateway was down)."""
        served = {tool.canonical_name for tool in self.catalog.tools()}
        stale = [tool_id for tool_id in self.corpus.index.ids() if tool_id not in served]
        if stale:
            self.corpus.remove(stale)
            for tool_id in stale:
                self._digests.pop(tool_id, None)
            self.dirty = True
        self._apply(self.catalog.tools(), ())

    def save(self) -> None:
        """Write the index and its manifest (each atomically); a no-op without a directory."""
        if self.directory is None:
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        with self.corpus.lock:
            self.corpus.index.save(self.directory / INDEX_FILE)
            manifest = {"format": _FORMAT, "digests": dict(self._digests)}
            _write_atomically(self.directory / MANIFEST_FILE, json.dumps(manifest, separators=(",", ":")))
            self.dirty = False

    def close(self) -> None:
        """Stop following the catalog and save what is unsaved."""
        self._unsubscribe()
        if self.dirty:
            self.save()

    # -- following the catalog ---------------------------------------------------------------

    def _on_change(self, change: CatalogChange) -> Awaitable[None] | None:
        self._apply((*change.added, *change.updated), change.removed)
        if self.directory is None or not self.dirty:
            return None
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            self.save()
            return None
        return self._save_in_background()

    async def _save_in_background(self) -> None:
        async with self._save_lock:
            if self.dirty:
                await asyncio.to_thread(self.save)

    def _apply(self, tools: Iterable[Tool], removed: Iterable[Tool]) -> None:
        fresh: list[ToolDoc] = []
        known: list[ToolDoc] = []
        for tool in tools:
            doc = doc_from_tool(tool)
            digest = _digest(doc)
            if self._digests.get(doc.id) == digest and doc.id in self.corpus.index:
                known.append(doc)
            else:
                fresh.append(doc)
                self._digests[doc.id] = digest
        gone = [tool.canonical_name for tool in removed]
        self.corpus.register(known)
        self.corpus.upsert(fresh)
        self.corpus.remove(gone)
        for tool_id in gone:
            self._digests.pop(tool_id, None)
        if fresh or gone:
            self.dirty = True

    def _load(self) -> tuple[ToolIndex, dict[str, str]]:
        """The saved index (stored counts take any configuration at query time), else an empty one."""
        if self.directory is None:
            return ToolIndex(self.config), {}
        index_path, manifest_path = self.directory / INDEX_FILE, self.directory / MANIFEST_FILE
        if not index_path.exists() or not manifest_path.exists():
            return ToolIndex(self.config), {}
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
            if manifest.get("format") != _FORMAT:
                logger.warning("routing index manifest at %s has another format; rebuilding", self.directory)
                return ToolIndex(self.config), {}
            index = ToolIndex.load(index_path, self.config)
            digests = {str(k): str(v) for k, v in manifest["digests"].items()}
        except Exception as exc:  # a damaged cache is rebuilt, never fatal
            logger.warning("cannot load the routing index from %s (%s); rebuilding it", self.directory, exc)
            return ToolIndex(self.config), {}
        return index, {k: v for k, v in digests.items() if k in index}


def _digest(doc: ToolDoc) -> str:
    """A digest of what the index sees of a tool (so a change in how documents are built re-indexes)."""
    return hashlib.sha256(repr(doc).encode("utf-8")).hexdigest()[:32]


def _write_atomically(path: Path, text: str) -> None:
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)
