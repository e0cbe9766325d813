"""Which media types carry JSON, and picking the JSON one out of an OpenAPI `content` map."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["json_media", "media_types"]


def _base(media_type: str) -> str:
    return media_type.split(";", 1)[0].strip().lower()


def _rank(media_type: str) -> int | None:
    """0 for application/json, 1 for a `+json` type, 2 for `*/*`; `None` for anything else."""
    base = _base(media_type)
    if base == "application/json":
        return 0
    if base.endswith("+json"):
        return 1
    if base in {"*/*", "application/*"}:
        return 2
    return None


def media_types(content: Mapping[str, Any]) -> list[str]:
    return [str(key) for key in content]


def json_media(content: Mapping[str, Any]) -> tuple[str, Any] | None:
    """The most specific JSON entry of a `content` map, as (media type, media type object)."""
    ranked = [(rank, key) for key in content if (rank := _rank(str(key))) is not None]
    if not ranked:
        return None
    _, key = min(ranked, key=lambda pair: pair[0])
    return str(key), content[key]
