"""Domain detection: which APIs a request is about, from the catalog's own vocabulary.

A long task ("go from Tokyo Tower to Shinjuku Gyoen, then find a Japanese restaurant nearby")
spreads its words over several tools of one API (geocoding, routing, place search), none of
which matches the whole request well. Scored as one document per API (its name, description
and tags, and the names of all its tools), the API stands out where its tools do not; its
tools then share that score (`IndexConfig.fusion.domain`) and the router lets a detected API
place more than `per_server_cap` tools. Nothing is hand-listed: every word comes from the catalog.

The API documents follow tool changes incrementally: a changed tool re-indexes only its API's row.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from colonnade.routing.lexical import Bm25Params, LexicalStore, Vocabulary

__all__ = ["DOMAIN_BM25", "DomainIndex"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

# Fields of an API document: its labels (name, description, tags), then its tools' names.
DOMAIN_BM25 = Bm25Params(k1=1.2, field_weights=(2.0, 1.0), field_b=(0.5, 0.75))


@dataclass(slots=True)
class _Api:
    tools: dict[str, tuple[list[str], list[str]]] = field(default_factory=dict)  # id -> (labels, name)
    row: int | None = None


class DomainIndex:
    """API documents built from tool terms; `scores` gives each API's relative BM25 for a query.

    It shares the tool index's vocabulary, so a query analysed once scores tools and APIs alike.
    """

    def __init__(self, vocabulary: Vocabulary) -> None:
        self._store = LexicalStore(DOMAIN_BM25, vocabulary)
        self._apis: dict[str, _Api] = {}
        self._api_of_tool: dict[str, str] = {}
        self._dirty: set[str] = set()
        self._names: list[str] = []  # API name per store row ("" for a removed row)

    def __len__(self) -> int:
        return sum(1 for api in self._apis.values() if api.tools)

    def api_of(self, tool_id: str) -> str | None:
        return self._api_of_tool.get(tool_id)

    def add(self, tool_id: str, api: str, labels: list[str], name: list[str]) -> None:
        """Count a tool in its API's document: `labels` are the API's name, description and the
        tool's tags as terms (each distinct label of any tool counts once), `name` its name's terms.
        A tool without an API ("") is left out."""
        self.remove((tool_id,))
        if not api:
            return  # a tool of no known API belongs to no domain
        self._store.vocabulary.add([*labels, *name])  # known to queries at once, indexed lazily
        self._apis.setdefault(api, _Api()).tools[tool_id] = (labels, name)
        self._api_of_tool[tool_id] = api
        self._dirty.add(api)

    def remove(self, ids: Iterable[str]) -> None:
        for tool_id in ids:
            api = self._api_of_tool.pop(tool_id, None)
            if api is not None:
                self._apis[api].tools.pop(tool_id, None)
                self._dirty.add(api)

    def scores(self, term_ids: IntArray, weights: FloatArray) -> dict[str, float]:
        """API -> score in (0, 1] relative to the best API, for a query's term ids and weights."""
        self._refresh()
        if not len(term_ids) or not self._names:
            return {}
        raw = self._store.scores(term_ids, weights)
        best = float(raw.max())
        if best <= 0:
            return {}
        rows = np.flatnonzero(raw > 0)
        return {self._names[row]: float(raw[row]) / best for row in rows.tolist()}

    def _refresh(self) -> None:
        """Re-index the APIs whose tools changed since the last query."""
        if not self._dirty:
            return
        fresh: list[str] = []
        for api in sorted(self._dirty):
            entry = self._apis[api]
            if entry.row is not None:
                self._store.remove(entry.row)
                self._names[entry.row] = ""
                entry.row = None
            if entry.tools:
                fresh.append(api)
            else:
                del self._apis[api]
        self._dirty.clear()
        rows = self._store.add([self._fields(self._apis[a]) for a in fresh])
        for api, row in zip(fresh, rows, strict=True):
            self._apis[api].row = row
            self._names.append(api)
        if self._store.n_removed > max(64, len(self._names) // 4):
            old_rows = self._store.compact()
            self._names = [self._names[row] for row in old_rows.tolist()]
            for row, api in enumerate(self._names):
                self._apis[api].row = row

    @staticmethod
    def _fields(api: _Api) -> list[list[str]]:
        """Distinct labels (sorted, so the document never depends on the order tools came in),
        and every tool's name terms."""
        labels = sorted({term for labels, _ in api.tools.values() for term in labels})
        return [labels, [term for _, name in api.tools.values() for term in name]]
