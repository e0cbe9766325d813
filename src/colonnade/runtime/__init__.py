"""Runtime: the composition root that wires store, catalog, adapters, pipeline and surfaces."""

from colonnade.runtime.gateway import Gateway

__all__ = ["Gateway"]
