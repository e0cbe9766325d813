"""The contract-level fields of an import: name, version, description and backend.

They come from `info`, `servers` and the document's security scheme; the root extension
`x-colonnade` (written by the exporter) carries what OpenAPI has no place for: the contract's
kebab-case `name`, its `classification` and the backend `timeout_ms`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from colonnade.contracts.model import KEBAB, SECRET_NAME, AuthType, Classification
from colonnade.contracts.openapi.naming import coerce_semver, kebab, snake_case
from colonnade.contracts.openapi.openapi_errors import OpenApiError
from colonnade.contracts.openapi.refs import RefResolver, join_pointer
from colonnade.contracts.openapi.report import ImportNote

__all__ = ["CONTRACT_EXTENSION", "SECRET_EXTENSION", "backend_of", "contract_header"]

CONTRACT_EXTENSION = "x-colonnade"
SECRET_EXTENSION = "x-colonnade-secret"
DEFAULT_VERSION = "0.1.0"
_KEBAB = re.compile(KEBAB)
_SECRET = re.compile(SECRET_NAME)
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


def _auth(
    doc: Mapping[str, Any], resolver: RefResolver, api: str, notes: list[ImportNote]
) -> dict[str, Any] | None:
    requirements = doc.get("security")
    if not isinstance(requirements, list):
        return None
    names = [str(n) for req in requirements if isinstance(req, Mapping) for n in req]
    if not names:
        return None
    schemes = _mapping(_mapping(doc.get("components")).get("securitySchemes"))
    name = names[0]
    pointer = join_pointer("/components/securitySchemes", name)
    if name not in schemes:
        raise OpenApiError(
            f"security requirement names the undeclared scheme {name!r}",
            pointer=pointer,
            hint="declare it under components.securitySchemes",
        )
    scheme, _ = resolver.follow(schemes[name], pointer)
    scheme = _mapping(scheme)
    mapped = _auth_kind(scheme)
    if mapped is None:
        kind, where = str(scheme.get("type", "")), str(scheme.get("in", ""))
        detail = f"{kind} in {where}" if where else kind or "untyped"
        notes.append(
            ImportNote(f"security scheme {name}", f"{detail} is not supported; add backend.auth by hand")
        )
        return None
    kind, header = mapped
    given = scheme.get(SECRET_EXTENSION)
    secret = given if isinstance(given, str) and _SECRET.match(given) else snake_case(f"{api}_{name}").upper()
    if secret != given:
        notes.append(ImportNote("backend.auth", f"reads the secret {secret}; define it before serving"))
    auth: dict[str, Any] = {"type": kind.value, "secret": secret}
    if header is not None:
        auth["header"] = header
    return auth


def _auth_kind(scheme: Mapping[str, Any]) -> tuple[AuthType, str | None] | None:
    """The contract's auth type (and header name) for a security scheme it can express."""
    kind, http_scheme = scheme.get("type"), str(scheme.get("scheme", "")).lower()
    if kind == "http" and http_scheme == "bearer":
        return AuthType.BEARER, None
    if kind == "http" and http_scheme == "basic":
        return AuthType.BASIC, None
    if kind == "apiKey" and scheme.get("in") == "header" and isinstance(scheme.get("name"), str):
        return AuthType.API_KEY_HEADER, str(scheme["name"])
    return None


def backend_of(
    doc: Mapping[str, Any],
    resolver: RefResolver,
    *,
    api: str,
    base_url: str | None,
    notes: list[ImportNote],
) -> dict[str, Any]:
    """`backend`: the base URL (override, else first server), auth and timeout."""
    if base_url is not None and not _ABSOLUTE.match(base_url):
        raise OpenApiError(f"base URL {base_url!r} is not an absolute http(s) URL", hint=_BASE_URL_HINT)
    backend: dict[str, Any] = {"base_url": base_url.rstrip("/") if base_url else _server_url(doc)}
    auth = _auth(doc, resolver, api, notes)
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
) -> dict[str, Any]:
    """Every contract field but `endpoints`, in the order a contract file lists them."""
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
    header["backend"] = backend_of(doc, resolver, api=name, base_url=base_url, notes=notes)
    return header
