"""The catalog: `Tool` records of everything callable, their names on the wire, and change events."""

from colonnade.catalog.catalog import ApiVersion, Catalog, CatalogChange, Listener
from colonnade.catalog.catalog_errors import (
    CatalogError,
    DuplicateToolName,
    InvalidCanonicalName,
    InvalidCursor,
    NotInCatalog,
    ToolConflict,
    WireNameCollision,
)
from colonnade.catalog.naming import (
    WireNames,
    WireProfile,
    from_wire,
    join_canonical,
    split_canonical,
    to_wire,
    wire_name_pattern,
)
from colonnade.catalog.projection import project_contract, project_operation
from colonnade.catalog.tool import Annotations, Determinism, Tool

__all__ = [
    "Annotations",
    "ApiVersion",
    "Catalog",
    "CatalogChange",
    "CatalogError",
    "Determinism",
    "DuplicateToolName",
    "InvalidCanonicalName",
    "InvalidCursor",
    "Listener",
    "NotInCatalog",
    "Tool",
    "ToolConflict",
    "WireNameCollision",
    "WireNames",
    "WireProfile",
    "from_wire",
    "join_canonical",
    "project_contract",
    "project_operation",
    "split_canonical",
    "to_wire",
    "wire_name_pattern",
]
