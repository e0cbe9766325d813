"""Turn free-form OpenAPI names into the restricted names a contract needs.

OpenAPI allows almost anything in an `operationId`, a parameter name or `info.title`;
a UAC wants identifiers, kebab-case and semver. Every function here is pure and total:
it always returns a usable name (or `None` where the caller must decide).
"""

from __future__ import annotations

import re
from collections.abc import Collection

__all__ = [
    "coerce_semver",
    "identifier",
    "kebab",
    "snake_case",
    "truncate",
    "unique",
]

_NOT_WORD = re.compile(r"[^A-Za-z0-9]+")
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$"
)
_LOOSE_VERSION = re.compile(r"^[vV]?(\d+)(?:[.-](\d+))?(?:[.-](\d+))?([-+][0-9A-Za-z.+-]*)?$")


def identifier(text: str, *, lower: bool = False) -> str:
    """`get-user` -> `get_user`: matches `^[A-Za-z_][A-Za-z0-9_]*$`, or is empty when nothing is left."""
    words = [w for w in _NOT_WORD.split(text) if w]
    name = "_".join(words)
    if lower:
        name = name.lower()
    if name and name[0].isdigit():
        name = f"_{name}"
    return name


def snake_case(text: str) -> str:
    """`listPets` -> `list_pets`, `repos/get-HTTPStatus` -> `repos_get_http_status`."""
    return identifier(_CAMEL_BOUNDARY.sub("_", text), lower=True)


def kebab(text: str) -> str:
    """`Swagger Petstore - OpenAPI 3.0` -> `swagger-petstore-openapi-3-0` (may be empty)."""
    return "-".join(w for w in _NOT_WORD.split(text.lower()) if w)


def unique(name: str, taken: Collection[str], *, max_length: int | None = None) -> str:
    """`name`, or `name_2`, `name_3`... the first one not in `taken`, kept within `max_length`."""
    base = name[:max_length] if max_length else name
    candidate, n = base, 1
    while candidate in taken:
        n += 1
        suffix = f"_{n}"
        stem = base[: max_length - len(suffix)] if max_length else base
        candidate = f"{stem}{suffix}"
    return candidate


def truncate(text: str, limit: int) -> str:
    """Collapse whitespace and cut at a word boundary so the result (with `...`) fits in `limit`."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 3]
    if " " in cut:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:.-") + "..."


def coerce_semver(version: str) -> str | None:
    """`1.0` -> `1.0.0`, `v2` -> `2.0.0`, `2022-11-28` -> `2022.11.28`; `None` when no number leads."""
    text = version.strip()
    if _SEMVER.match(text):
        return text
    match = _LOOSE_VERSION.match(text)
    if match is None:
        return None
    major, minor, patch, rest = match.groups()
    core = ".".join(str(int(part or 0)) for part in (major, minor, patch))
    candidate = core + (rest or "")
    return candidate if _SEMVER.match(candidate) else core
