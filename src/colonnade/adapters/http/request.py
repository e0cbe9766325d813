"""Turn a binding and validated arguments into the pieces of one HTTP request.

Path values are percent-encoded as a single segment (a `/`, `?`, `#` or `..` in a value can
never change which resource is addressed); query and header values are rendered as text
(`true`/`false` for booleans, JSON for objects); body arguments form one JSON object, or form
fields or multipart parts when the binding's `body_media_type` says so (`form.py`).
Arguments the binding does not describe are ignored: the caller validated them already.
The URL is built here, already encoded, so no client normalises a `%2E%2E` segment away.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import quote, urlencode

from yarl import URL

from colonnade.adapters.http.form import (
    BodyField,
    FormEncodingError,
    FormPart,
    multipart_parts,
    urlencoded_body,
)
from colonnade.adapters.outcome import MISCONFIGURED, SCHEMA
from colonnade.adapters.secrets import SecretResolver
from colonnade.catalog.http_binding import HttpBinding, ParamLocation
from colonnade.contracts.model import AuthType, BackendAuth, BodyMediaType

__all__ = [
    "CLIENT_HEADERS",
    "DEFAULT_API_KEY_HEADER",
    "BackendBase",
    "RequestBuildError",
    "RequestParts",
    "auth_headers",
    "backend_base",
    "caller_headers",
    "request_parts",
]

DEFAULT_API_KEY_HEADER = "X-API-Key"
JSON_MEDIA_TYPE = BodyMediaType.JSON.value
MULTIPART_MEDIA_TYPE = BodyMediaType.MULTIPART.value
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_DOT_SEGMENTS = frozenset({".", ".."})
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_HEADER_VALUE = re.compile(r"^[\t\x20-\x7e]*$")
_ABSENT = object()
# characters a path template may carry as written; anything else in it is percent-encoded
_PATH_SAFE = "/%:@!$&'()*+,;=~"
_SCHEMES = frozenset({"http", "https"})
# framing and connection management belong to the HTTP client: a value from a call could end a
# pooled connection or smuggle a second request past the backend's parser
CLIENT_HEADERS = frozenset(
    {"connection", "content-length", "keep-alive", "proxy-connection", "te", "transfer-encoding", "upgrade"}
)


class RequestBuildError(Exception):
    """The request cannot be built; `code` is a taxonomy code, the message names the argument."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True)
class BackendBase:
    """A contract's base URL, checked once: its origin (`scheme://host:port`, lower-cased, the key
    of a connection pool) and its encoded form without a trailing `/`."""

    origin: str
    prefix: str


@dataclass(frozen=True, slots=True)
class RequestParts:
    """What one request sends; a multipart body is `form` (its parts), any other body `content`."""

    method: str
    url: URL
    headers: dict[str, str]
    content: bytes | None
    form: tuple[FormPart, ...] | None = None


def request_parts(binding: HttpBinding, arguments: dict[str, Any]) -> RequestParts:
    """Place every described argument; raise RequestBuildError when one cannot be placed."""
    query: list[tuple[str, str]] = []
    headers: dict[str, str] = {"accept": "application/json"}
    path_values: dict[str, Any] = {}
    body: list[BodyField] = []
    raw_body: Any = _ABSENT
    for spec in binding.params:
        if spec.name not in arguments:
            continue
        value = arguments[spec.name]
        if spec.location is ParamLocation.PATH:
            path_values[spec.wire_name] = value
        elif spec.location is ParamLocation.QUERY:
            query.extend(_query_pairs(spec.wire_name, value))
        elif spec.location is ParamLocation.HEADER:
            if value is not None:
                _set_header(headers, spec.wire_name, _text(value))
        elif spec.location is ParamLocation.BODY:
            body.append((spec.wire_name, value, spec.file_media_type))
        else:
            raw_body = value
    content, form = _body(binding.body_media_type, raw_body, body)
    if content is not None:
        headers["content-type"] = binding.body_media_type
    target = backend_base(binding.base_url).prefix + _fill_path(binding.path, path_values)
    if query:
        target += "?" + urlencode(query, quote_via=quote)
    return RequestParts(binding.method, URL(target, encoded=True), headers, content, form)


@lru_cache(maxsize=1024)
def backend_base(base_url: str) -> BackendBase:
    """Parse a base URL once per process; RequestBuildError when it cannot address an HTTP backend."""
    try:
        url = URL(base_url)
        host, port = url.raw_host, url.port
    except ValueError as exc:
        raise RequestBuildError(MISCONFIGURED, _bad_base(base_url, str(exc))) from None
    if url.scheme not in _SCHEMES or not host or port is None:
        raise RequestBuildError(MISCONFIGURED, _bad_base(base_url, "use an http or https URL with a host"))
    host = f"[{host}]" if ":" in host else host
    origin = f"{url.scheme}://{host}:{port}".lower()
    return BackendBase(origin, str(url.with_query(None).with_fragment(None)).rstrip("/"))


def _bad_base(base_url: str, why: str) -> str:
    """Said to clients, so it names the setting, not the URL (the adapter logs that)."""
    return f"the backend URL is not usable ({why}); fix the contract's backend.base_url (or backend_url)"


async def auth_headers(
    auth: BackendAuth, secrets: SecretResolver, *, tenant: str | None = None
) -> dict[str, str]:
    """The header that authenticates the gateway to `tenant`'s backend; the secret's value stays in it."""
    value = await secrets.resolve(auth.secret, tenant=tenant)
    if value is None:
        raise RequestBuildError(
            MISCONFIGURED,
            f"backend secret {auth.secret!r} is not set; {secrets.how_to_set(auth.secret, tenant=tenant)}",
        )
    if auth.type is AuthType.BEARER:
        name, header_value = "authorization", f"Bearer {value}"
    elif auth.type is AuthType.API_KEY_HEADER:
        name, header_value = (auth.header or DEFAULT_API_KEY_HEADER).lower(), value
    else:
        name, header_value = "authorization", _basic(auth.secret, value)
    if not _HEADER_VALUE.match(header_value):
        raise RequestBuildError(
            MISCONFIGURED,
            f"backend secret {auth.secret!r} contains characters a header cannot carry "
            "(only printable ASCII is allowed); set it again without them",
        )
    return {name: header_value}


def _basic(secret_name: str, value: str) -> str:
    if ":" not in value:
        raise RequestBuildError(
            MISCONFIGURED,
            f"backend secret {secret_name!r} is used for basic auth and must have the form user:password",
        )
    return "Basic " + base64.b64encode(value.encode("utf-8")).decode("ascii")


def _fill_path(template: str, values: dict[str, Any]) -> str:
    pieces = _template(template)
    filled = [_segment(piece, values) if index % 2 else piece for index, piece in enumerate(pieces)]
    return "".join(filled)


@lru_cache(maxsize=4096)
def _template(template: str) -> tuple[str, ...]:
    """Literal text (percent-encoded where needed) and parameter names, alternating."""
    pieces = _PLACEHOLDER.split(template)
    return tuple(piece if index % 2 else quote(piece, safe=_PATH_SAFE) for index, piece in enumerate(pieces))


def _segment(name: str, values: dict[str, Any]) -> str:
    value = values.get(name)
    if value is None:
        raise RequestBuildError(SCHEMA, f"path parameter {name!r} is missing; give it a value")
    encoded = quote(_text(value), safe="")
    if not encoded:
        raise RequestBuildError(
            SCHEMA, f"path parameter {name!r} is empty; an empty segment would address another resource"
        )
    return encoded.replace(".", "%2E") if encoded in _DOT_SEGMENTS else encoded


def _query_pairs(name: str, value: Any) -> list[tuple[str, str]]:
    items = value if isinstance(value, list | tuple) else [value]
    return [(name, _text(item)) for item in items if item is not None]


def caller_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Headers a caller adds to a request, lower-cased, less those the HTTP client manages."""
    kept: dict[str, str] = {}
    for name, value in headers.items():
        if name.lower() not in CLIENT_HEADERS:
            _set_header(kept, name, value)
    return kept


def _set_header(headers: dict[str, str], name: str, value: str) -> None:
    if not _HEADER_NAME.match(name):
        raise RequestBuildError(
            MISCONFIGURED, f"header name {name!r} (x-name in the contract) is not a valid HTTP header name"
        )
    if name.lower() in CLIENT_HEADERS:
        raise RequestBuildError(
            MISCONFIGURED,
            f"header {name!r} is managed by the gateway's HTTP client and cannot be an argument; "
            "remove it from the contract",
        )
    value = value.strip(" \t")
    if not _HEADER_VALUE.match(value):
        raise RequestBuildError(
            SCHEMA, f"header {name!r}: the value must be printable ASCII without line breaks"
        )
    headers[name.lower()] = value


_Body = tuple[bytes | None, tuple[FormPart, ...] | None]


def _body(media_type: str, raw_body: Any, body: list[BodyField]) -> _Body:
    """The body as bytes (JSON, urlencoded) or multipart parts; no arguments, no body.

    A raw-body argument is the whole body and wins over body arguments; in a form it must be an
    object, whose members are the fields.
    """
    if media_type == JSON_MEDIA_TYPE:
        if raw_body is not _ABSENT:
            return _json_body(raw_body), None
        return (_json_body({name: value for name, value, _ in body}), None) if body else (None, None)
    if raw_body is not _ABSENT:
        if not isinstance(raw_body, dict):
            raise RequestBuildError(
                SCHEMA, f"a {media_type} body is a set of fields: the raw body must be an object"
            )
        body = [(str(name), value, None) for name, value in raw_body.items()]
    if not body:
        return None, None
    try:
        if media_type == MULTIPART_MEDIA_TYPE:
            return None, multipart_parts(body)
        return urlencoded_body(body), None
    except (FormEncodingError, TypeError, ValueError) as exc:
        raise RequestBuildError(SCHEMA, f"the {media_type} body cannot be encoded: {exc}") from None


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return str(value)


def _json_body(value: Any) -> bytes:
    try:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()
    except (TypeError, ValueError) as exc:
        raise RequestBuildError(SCHEMA, f"the request body cannot be encoded as JSON: {exc}") from None
