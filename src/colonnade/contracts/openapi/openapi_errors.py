"""The one error the OpenAPI import and export raise: what is wrong, where, and how to fix it."""

from __future__ import annotations

from colonnade.errors import ColonnadeError

__all__ = ["OpenApiError"]


class OpenApiError(ColonnadeError):
    """The document cannot be imported (or the contract exported) as a whole.

    `pointer` is a JSON pointer into the OpenAPI document ("" is the root) when the
    problem has a place; `hint` says what to change. Problems confined to one operation
    never raise: the importer skips that operation and reports why.
    """

    code = "C-CONTRACT-OPENAPI"

    def __init__(self, message: str, *, pointer: str | None = None, hint: str | None = None) -> None:
        self.message = message
        self.pointer = pointer
        self.hint = hint
        where = f" (at {pointer or '/'})" if pointer is not None else ""
        tail = f"; {hint}" if hint else ""
        super().__init__(f"{message}{where}{tail}")
