"""Form bodies: body arguments as `application/x-www-form-urlencoded` fields or `multipart/form-data` parts.

Many APIs (Stripe, Twilio) take form fields rather than JSON. The contract says so with the
endpoint's `body_media_type`; the arguments are the same JSON values, encoded here:

- urlencoded: a scalar is one field (`true`/`false` for booleans); an array of scalars repeats the
  field (`Tag=a&Tag=b`, Twilio's way); an object is spread as `name[key]=value`, nested objects and
  arrays inside it as `name[key][sub]` and `name[key][0]` (the `deepObject` style, Stripe's way);
  null values are left out.
- multipart: one part per field as above, except that an object (or an array of objects) is one
  part of JSON, as OpenAPI specifies for multipart; a base64 string argument whose property is a
  file (`contentEncoding: base64`) becomes a file part of its decoded bytes, named after the field,
  with the property's `contentMediaType`.

The parts are plain data (`FormPart`); the adapter turns them into an aiohttp `FormData` for each
send, since one `FormData` cannot be sent twice.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

__all__ = ["BodyField", "FormEncodingError", "FormPart", "multipart_parts", "urlencoded_body"]


class FormEncodingError(ValueError):
    """An argument cannot be encoded as a form field; the message names it."""


@dataclass(frozen=True, slots=True)
class FormPart:
    """One part of a multipart body: text, JSON text or a file's bytes."""

    name: str
    value: str | bytes
    content_type: str | None = None
    filename: str | None = None


BodyField = tuple[str, Any, str | None]
"""A body argument: its wire name, its value, and its file media type (None: not a file)."""


def urlencoded_body(fields: Iterable[BodyField]) -> bytes:
    """`a=1&b=x&meta%5Bk%5D=v`: every field in order, spaces as %20."""
    pairs = [pair for name, value, _ in fields for pair in _pairs(name, value, nested=False)]
    return urlencode(pairs, quote_via=quote).encode("ascii")


def multipart_parts(fields: Iterable[BodyField]) -> tuple[FormPart, ...]:
    """The parts of a multipart body, in field order (repeated fields stay together)."""
    return tuple(part for name, value, media in fields for part in _parts(name, value, media))


def _pairs(name: str, value: Any, *, nested: bool) -> Iterator[tuple[str, str]]:
    if value is None:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _pairs(f"{name}[{key}]", item, nested=True)
    elif isinstance(value, list | tuple):
        flat = not nested and not any(isinstance(item, dict | list | tuple) for item in value)
        for index, item in enumerate(value):
            yield from _pairs(name if flat else f"{name}[{index}]", item, nested=True)
    else:
        yield name, _text(value)


def _parts(name: str, value: Any, file_media_type: str | None) -> Iterator[FormPart]:
    if value is None:
        return
    if isinstance(value, list | tuple):
        for item in value:
            yield from _parts(name, item, file_media_type)
    elif file_media_type is not None and isinstance(value, str):
        yield FormPart(name, _decoded(name, value), file_media_type, filename=name)
    elif isinstance(value, dict):
        text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        yield FormPart(name, text, "application/json")
    else:
        yield FormPart(name, _text(value))


def _decoded(name: str, value: str) -> bytes:
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise FormEncodingError(
            f"argument {name!r} is a file and must be base64 text (RFC 4648, no line breaks)"
        ) from None


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
