"""The contract-level fields of an import: name, version, description and backend.

They come from `info`, `servers` and the document's security (`security.py`); the root extension
`x-colonnade` (written by the exporter) carries what OpenAPI has no place for: the contract's
kebab-case `name`, its `classification` and the backend `timeout_ms`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from colonnade.contracts.model import KEBAB, Classification
from colonnade.contracts.openapi.naming import coerce_semver, kebab
from colonnade.contracts.openapi.openapi_errors import OpenApiError
from colonnade.contracts.openapi.refs import RefResolver, join_pointer
from colonnade.contracts.openapi.report import ImportNote
from colonnade.contracts.openapi.security import Credentials, OperationSecurity, map_security

__all__ = ["CONTRACT_EXTENSION", "backend_of", "contract_header"]

CONTRACT_EXTENSION = "x-colonnade"
DEFAULT_VERSION = "0.1.0"
_KEBAB = re.compile(KEBAB)
_ABSOLUTE = re.compile(r"^https?://[^\s/]+")
_SERVER_VARIABLE = re.compile(r"\{([^{}]+)\}")
_BASE_URL_HINT = (
    "give the API's absolute base URL with --base-url (e.g. --base-url https://api.example.com/v1)"
)


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _text(value: object) -> str:
    return " ".join(str(value).split()) if value is not None else ""


def _kebab_or_fail(value: str, what: str, hint: str) -> str:
    if not _KEBAB.match(value):
        raise OpenApiError(f"{what} {value!r} is not kebab-case", hint=hint)
    return value


def _contract_name(doc: Mapping[str, Any], api: str | None) -> str:
    if api is not None:
        return _kebab_or_fail(api, "API name", "use lower-case words joined by '-', e.g. 'billing-api'")
    given = _mapping(doc.get(CONTRACT_EXTENSION)).get("name")
    if isinstance(given, str) and _KEBAB.match(given):
        return given
    name = kebab(_text(_mapping(doc.get("info")).get("title")))
    if not name:
        raise OpenApiError(
            "info.title gives no usable contract name",
            pointer="/info/title",
            hint="name the API with --api (kebab-case, e.g. --api orders)",
        )
    return name


def _version(info: Mapping[str, Any], notes: list[ImportNote]) -> str:
    raw = info.get("version")
    text = str(raw).strip() if raw is not None else ""
    version = coerce_semver(text) if text else None
    if version is None:
        shown = repr(text) if text else "missing"
        notes.append(ImportNote("info.version", f"{shown} is no version; wrote {DEFAULT_VERSION}"))
        return DEFAULT_VERSION
    if version != text:
        notes.append(ImportNote("info.version", f"{text!r} written as the semantic version {version}"))
    return version


def _server_url(doc: Mapping[str, Any]) -> str:
    servers = doc.get("servers")
    if not isinstance(servers, list) or not servers:
        raise OpenApiError("the document declares no servers", pointer="/servers", hint=_BASE_URL_HINT)
    server = _mapping(servers[0])
    url = server.get("url")
    if not isinstance(url, str):
        raise OpenApiError("servers[0] has no url", pointer="/servers/0", hint=_BASE_URL_HINT)
    variables = _mapping(server.get("variables"))

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        default = _mapping(variables.get(name)).get("default")
        if default is None:
            raise OpenApiError(
                f"server variable {{{name}}} has no default",
                pointer=join_pointer("/servers/0/variables", name),
                hint=f"declare variables.{name}.default, or {_BASE_URL_HINT}",
            )
        return str(default)

    resolved = _SERVER_VARIABLE.sub(substitute, url)
    if not _ABSOLUTE.match(resolved):
        raise OpenApiError(
            f"servers[0].url {resolved!r} is relative; a contract needs an absolute base URL",
            pointer="/servers/0/url",
            hint=_BASE_URL_HINT,
        )
    return resolved.rstrip("/")


def backend_of(
    doc: Mapping[str, Any], *, base_url: str | None, auth: dict[str, Any] | None
) -> dict[str, Any]:
    """`backend`: the base URL (override, else first server), auth and timeout."""
    if base_url is not None and not _ABSOLUTE.match(base_url):
        raise OpenApiError(f"base URL {base_url!r} is not an absolute http(s) URL", hint=_BASE_URL_HINT)
    backend: dict[str, Any] = {"base_url": base_url.rstrip("/") if base_url else _server_url(doc)}
    if auth is not None:
        backend["auth"] = auth
    timeout = _mapping(doc.get(CONTRACT_EXTENSION)).get("timeout_ms")
    if isinstance(timeout, int) and not isinstance(timeout, bool) and 1 <= timeout <= 600_000:
        backend["timeout_ms"] = timeout
    return backend


def contract_header(
    doc: Mapping[str, Any],
    resolver: RefResolver,
    *,
    tenant: str,
    api: str | None,
    base_url: str | None,
    notes: list[ImportNote],
    operations: Iterable[OperationSecurity] = (),
) -> tuple[dict[str, Any], Credentials]:
    """Every contract field but `endpoints`, in the order a contract file lists them, and the credentials."""
    tenant = _kebab_or_fail(tenant, "tenant", "use lower-case words joined by '-', e.g. 'acme'")
    info = _mapping(doc.get("info"))
    name = _contract_name(doc, api)
    display_name = _text(info.get("title")) or name
    description = next((info[k] for k in ("description", "summary") if isinstance(info.get(k), str)), None)
    header: dict[str, Any] = {
        "name": name,
        "version": _version(info, notes),
        "tenant": tenant,
        "display_name": display_name,
        "description": description if description is not None else f"{display_name}, imported from OpenAPI.",
        "status": "draft",
    }
    classification = _mapping(doc.get(CONTRACT_EXTENSION)).get("classification")
    if classification in {c.value for c in Classification}:
        header["classification"] = classification
    credentials = map_security(doc, resolver, api=name, operations=operations)
    header["backend"] = backend_of(doc, base_url=base_url, auth=credentials.auth)
    return header, credentials
