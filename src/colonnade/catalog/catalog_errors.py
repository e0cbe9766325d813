"""Errors a user can meet when tools enter or leave the catalog: each says what and how to fix it."""

from __future__ import annotations

from colonnade.errors import ColonnadeError

__all__ = [
    "CatalogError",
    "DuplicateToolName",
    "InvalidCanonicalName",
    "InvalidCursor",
    "NotInCatalog",
    "ToolConflict",
    "WireNameCollision",
]


class CatalogError(ColonnadeError):
    """Base of catalog errors; `code` is stable (for logs and clients), `fix` is a hint for a human."""

    code = "C-CONTRACT-CATALOG"

    def __init__(self, message: str, fix: str) -> None:
        self.message = message
        self.fix = fix
        super().__init__(f"{message}; {fix}")


class InvalidCanonicalName(CatalogError, ValueError):
    """A canonical name is not `tenant:api:tool` with three non-empty segments."""

    code = "C-CONTRACT-TOOL-NAME"

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(
            f"invalid canonical tool name {name!r}",
            "use 'tenant:api:tool' with three non-empty segments (no ':' in tenant or api)",
        )


class WireNameCollision(CatalogError, ValueError):
    """Two canonical names would share one wire name."""

    code = "C-CONTRACT-WIRE-COLLISION"

    def __init__(self, wire: str, existing: str, incoming: str) -> None:
        self.wire = wire
        self.existing = existing
        self.incoming = incoming
        super().__init__(
            f"wire name {wire!r} of {incoming!r} is already used by {existing!r}",
            "rename one of the tools (e.g. a different llm.tool_name)",
        )


class DuplicateToolName(CatalogError):
    """One contract projects two operations onto the same canonical name."""

    code = "C-CONTRACT-DUPLICATE-TOOL"

    def __init__(self, canonical: str, first: str, second: str) -> None:
        self.canonical = canonical
        super().__init__(
            f"{first} and {second} both become tool {canonical!r}",
            "give each operation a distinct llm.tool_name (or operation_id)",
        )


class ToolConflict(CatalogError):
    """A tool name is already provided by another source (contract API or tool source)."""

    code = "C-CONTRACT-TOOL-CONFLICT"

    def __init__(self, canonical: str, owner: str, incoming: str) -> None:
        self.canonical = canonical
        super().__init__(
            f"tool {canonical!r} from {incoming} is already provided by {owner}",
            "remove the other source first or rename the tool",
        )


class NotInCatalog(CatalogError):
    """deprecate/remove named an API version or tool source the catalog does not hold."""

    code = "C-CONTRACT-UNKNOWN"

    def __init__(self, what: str, known: list[str]) -> None:
        self.what = what
        listing = ", ".join(known) if known else "none"
        super().__init__(f"{what} is not in the catalog", f"the catalog holds: {listing}")


class InvalidCursor(CatalogError, ValueError):
    """A pagination cursor that this catalog did not hand out."""

    code = "I-REQ-CURSOR"

    def __init__(self, cursor: str) -> None:
        self.cursor = cursor
        super().__init__(
            f"invalid pagination cursor {cursor[:40]!r}",
            "pass back the next_cursor of the previous page unchanged, or omit it to start over",
        )
