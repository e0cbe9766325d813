"""Local `$ref` resolution inside one OpenAPI document.

Only references into the same document (`#/...`) are supported: a contract is one
self-contained file, so external references must be bundled first. A chain of references
that loops back on itself with no object in between (`A -> B -> A`) can never resolve and is
an error; a cycle *through* a schema (a tree node whose children are nodes) is legitimate and
is handled by `colonnade.contracts.openapi.schema_conversion`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

from colonnade.contracts.openapi.openapi_errors import OpenApiError

__all__ = ["RefResolver", "escape_token", "join_pointer"]

_BUNDLE_HINT = (
    "bundle the document into one file first (e.g. `npx @redocly/cli bundle spec.yaml -o bundled.yaml`)"
)


def escape_token(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def join_pointer(pointer: str, *tokens: str | int) -> str:
    return pointer + "".join(f"/{escape_token(str(t))}" for t in tokens)


class RefResolver:
    """Looks up `#/...` references in one document and follows chains of them."""

    def __init__(self, document: Mapping[str, Any]) -> None:
        self._document = document

    def target_pointer(self, ref: object, *, at: str) -> str:
        """The JSON pointer a `$ref` value designates; `at` is where the `$ref` sits, for errors."""
        if not isinstance(ref, str):
            raise OpenApiError(f"$ref must be a string, got {type(ref).__name__}", pointer=at)
        if not ref.startswith("#"):
            raise OpenApiError(f"$ref {ref!r} points outside this document", pointer=at, hint=_BUNDLE_HINT)
        fragment = unquote(ref[1:])
        if fragment and not fragment.startswith("/"):
            raise OpenApiError(
                f"$ref {ref!r} is not a JSON pointer",
                pointer=at,
                hint="write it as '#/components/schemas/Name'",
            )
        return fragment

    def lookup(self, pointer: str, *, ref: str, at: str) -> Any:
        """The node at `pointer`; a clear error naming the missing part when there is none."""
        node: Any = self._document
        walked = ""
        for raw in pointer.split("/")[1:]:
            token = raw.replace("~1", "/").replace("~0", "~")
            walked = join_pointer(walked, token)
            if isinstance(node, Mapping) and token in node:
                node = node[token]
            elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
            else:
                raise OpenApiError(
                    f"$ref {ref!r} does not resolve: nothing at {walked}",
                    pointer=at,
                    hint="fix the reference or add the missing component",
                )
        return node

    def resolve(self, ref: object, *, at: str) -> tuple[str, Any]:
        """One step: the pointer and node a `$ref` designates."""
        pointer = self.target_pointer(ref, at=at)
        return pointer, self.lookup(pointer, ref=str(ref), at=at)

    def follow(self, node: Any, pointer: str) -> tuple[Any, str]:
        """Follow `$ref` after `$ref` until a real object; returns it and where it lives."""
        chain = [pointer]
        while isinstance(node, Mapping) and "$ref" in node:
            target, node = self.resolve(node["$ref"], at=join_pointer(pointer, "$ref"))
            if target in chain:
                loop = " -> ".join([*chain[chain.index(target) :], target])
                raise OpenApiError(
                    f"$ref cycle with nothing in between: {loop}",
                    pointer=chain[0],
                    hint="one of these references must point to an actual object",
                )
            chain.append(target)
            pointer = target
        return node, pointer
