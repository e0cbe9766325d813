"""OpenAPI 3.0/3.1 import into draft contracts, and export of contracts as OpenAPI 3.1."""

from colonnade.contracts.openapi.exporter import export_openapi
from colonnade.contracts.openapi.importer import import_openapi
from colonnade.contracts.openapi.openapi_errors import OpenApiError
from colonnade.contracts.openapi.report import (
    ImportedOperation,
    ImportNote,
    ImportResult,
    ReviewItem,
    SkippedOperation,
)

__all__ = [
    "ImportNote",
    "ImportResult",
    "ImportedOperation",
    "OpenApiError",
    "ReviewItem",
    "SkippedOperation",
    "export_openapi",
    "import_openapi",
]
