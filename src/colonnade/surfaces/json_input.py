"""One behaviour for JSON request bodies, the same on REST (`/v1`) and MCP (`/mcp`, `/servers/*/mcp`).

The HTTP edge applies it to every POST, PUT and PATCH on those paths, before any surface reads the
body:

- a request with a body declares `Content-Type: application/json`, with no charset or `charset=utf-8`;
  anything else is 415 `I-REQ-MEDIA-TYPE` (a browser cannot send that cross-origin without a CORS
  preflight this gateway never grants);
- the body is at most `server.max_request_bytes` (413 `I-REQ-TOO-LARGE`, from the edge);
- the body is UTF-8 (RFC 8259): a leading UTF-8 byte-order mark is dropped, as RFC 8259 allows a
  parser to do; UTF-16/32 (their byte-order marks, or a NUL among the first four bytes) and invalid
  bytes are 400 `I-REQ-ENCODING`;
- no object has the same key twice: 400 `I-REQ-DUPLICATE-KEY` naming the key. Parsers disagree on
  which value wins, so the gateway and a backend could otherwise read two different requests.

Malformed JSON passes on unchanged: each surface answers it in its own protocol (JSON-RPC's parse
error, REST's `I-REQ-ENVELOPE`).
"""

from __future__ import annotations

import json
from typing import Any

from colonnade.surfaces.edge_refusal import EdgeRefusal

__all__ = ["ACCEPTED", "UTF8_BOM", "checked_body", "checked_json", "media_type_refusal"]

UTF8_BOM = b"\xef\xbb\xbf"
_OTHER_BOMS = (b"\xff\xfe", b"\xfe\xff")  # UTF-16 (and UTF-32 LE, which starts the same)
ACCEPTED = ("application/json", "application/json; charset=utf-8")
_UTF8_NAMES = frozenset({"utf-8", "utf8"})
_SHOWN_KEY_CHARS = 100


def media_type_refusal(content_type: str | None) -> EdgeRefusal | None:
    """None for `application/json` (optionally `charset=utf-8`); else why not."""
    media, _, parameters = (content_type or "").partition(";")
    charset = _parameter(parameters, "charset")
    if media.strip().lower() == "application/json" and (charset is None or charset.lower() in _UTF8_NAMES):
        return None
    shown = repr(content_type) if content_type else "no Content-Type"
    return EdgeRefusal(
        "I-REQ-MEDIA-TYPE",
        f"send the body with Content-Type: application/json (optionally charset=utf-8); got {shown}",
        415,
        {
            "content_type": (content_type or "")[:200],
            "accepted": ["application/json", "application/json; charset=utf-8"],
        },
    )


def checked_body(body: bytes) -> tuple[bytes, EdgeRefusal | None]:
    """The body as the surfaces get it (a UTF-8 byte-order mark dropped), or why it is refused."""
    checked, _, refusal = checked_json(body)
    return checked, refusal


def checked_json(body: bytes) -> tuple[bytes, Any, EdgeRefusal | None]:
    """`checked_body`, with the JSON value the duplicate-key check parsed (None when the body is not
    JSON, or is refused), for a surface that would otherwise parse the same body again."""
    if body.startswith(UTF8_BOM):
        body = body[len(UTF8_BOM) :]
    if body.startswith(_OTHER_BOMS) or b"\x00" in body[:4]:  # RFC 4627's test: JSON starts with ASCII
        return body, None, _encoding("the body looks like UTF-16 or UTF-32; send JSON as UTF-8")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        return body, None, _encoding(f"the body is not valid UTF-8 (byte {exc.start})", offset=exc.start)
    document, key = _parsed(text)
    if key is not None:
        shown = key if len(key) <= _SHOWN_KEY_CHARS else key[:_SHOWN_KEY_CHARS] + "..."
        return (
            body,
            None,
            EdgeRefusal(
                "I-REQ-DUPLICATE-KEY",
                f"the key {shown!r} appears twice in one JSON object; send each key once",
                400,
                {"key": shown},
            ),
        )
    return body, document, None


class _Duplicate(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """`object_pairs_hook`: the object, unless a key repeats."""
    if len(pairs) > 1 and len({key for key, _ in pairs}) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Duplicate(key)
            seen.add(key)
    return dict(pairs)


def _parsed(text: str) -> tuple[Any, str | None]:
    """The JSON value and None, or None and the first repeated key of any object (None and None for
    text that is not JSON: not ours to judge)."""
    try:
        return json.loads(text, object_pairs_hook=_unique), None
    except _Duplicate as found:
        return None, found.key
    except (ValueError, RecursionError):
        return None, None


def _encoding(message: str, **details: Any) -> EdgeRefusal:
    return EdgeRefusal("I-REQ-ENCODING", message, 400, details)


def _parameter(parameters: str, name: str) -> str | None:
    for item in parameters.split(";"):
        key, _, value = item.partition("=")
        if key.strip().lower() == name:
            return value.strip().strip('"')
    return None
