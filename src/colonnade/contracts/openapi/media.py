"""Which media types carry JSON or form fields, and picking one out of an OpenAPI `content` map."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["FORM_MEDIA_TYPES", "base_media", "form_media", "json_media", "media_types"]

FORM_MEDIA_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")
"""Request bodies of form fields a contract can declare (`body_media_type`), preferred first."""


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


def form_media(content: Mapping[str, Any]) -> tuple[str, Any] | None:
    """The form entry of a `content` map (urlencoded before multipart), as (media type, object)."""
    for media in FORM_MEDIA_TYPES:
        for key in content:
            if base_media(str(key)) == media:
                return str(key), content[key]
    return None


def base_media(media_type: str) -> str:
    """`Multipart/Form-Data; charset=utf-8` -> `multipart/form-data`."""
    return _base(media_type)
