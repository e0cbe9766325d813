"""Routing: the retrieval index that finds the few right tools for a request among thousands."""

from colonnade.routing.documents import FIELDS, ToolDoc, doc_from_benchmark, doc_from_tool
from colonnade.routing.fusion import FusionWeights
from colonnade.routing.index import Hit, IndexConfig, ToolIndex

__all__ = [
    "FIELDS",
    "FusionWeights",
    "Hit",
    "IndexConfig",
    "ToolDoc",
    "ToolIndex",
    "doc_from_benchmark",
    "doc_from_tool",
]
