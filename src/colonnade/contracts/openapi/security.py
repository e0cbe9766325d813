"""An OpenAPI document's security -> the contract's backend auth, and what a human must still do.

A credential is the gateway's business, never an argument an agent fills in: the scheme the
operations need becomes `backend.auth` with the *name* of a secret, and every parameter that
carries a credential (the header an `apiKey` scheme names, or a header called like one, e.g.
petstore's `api_key` on `deletePet`) is dropped from the tools' arguments. A contract sends one
credential, so the scheme is chosen among the document-level requirements first, else as the
one that lets the most operations through; whatever that leaves undone (an OAuth2 token to
obtain, a key sent in the query, operations needing another scheme) is listed for a human.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from colonnade.contracts.model import SECRET_NAME, AuthType
from colonnade.contracts.openapi.naming import snake_case
from colonnade.contracts.openapi.openapi_errors import OpenApiError
from colonnade.contracts.openapi.refs import RefResolver, join_pointer
from colonnade.contracts.openapi.report import ImportNote

__all__ = ["SECRET_EXTENSION", "Credentials", "OperationSecurity", "map_security"]

SECRET_EXTENSION = "x-colonnade-secret"
_SECRET = re.compile(SECRET_NAME)
_CREDENTIAL_HEADERS = frozenset(
    {"api_key", "apikey", "api-key", "x-api-key", "x-apikey", "x-auth-token", "x-access-token"}
)
"""Header names that carry a credential even when no security scheme says so."""
_BY_NAME = "a credential, by its name"
_TOKEN_SCHEMES = frozenset({"oauth2", "openIdConnect"})


@dataclass(frozen=True, slots=True)
class OperationSecurity:
    """What the importer knows of one operation: how it reads, its `security`, its parameters."""

    label: str
    security: Any
    parameters: Sequence[Mapping[str, Any]]


@dataclass
class Credentials:
    """The backend auth (plain data, or None) and the parameters that carry credentials."""

    auth: dict[str, Any] | None = None
    parameters: dict[tuple[str, str], str] = field(default_factory=dict)
    """(location, name in lower case) -> what it is the credential of, for the note that drops it."""
    needs_human: list[ImportNote] = field(default_factory=list)
    notes: list[ImportNote] = field(default_factory=list)

    def carries_credential(self, location: str, name: str) -> str | None:
        return self.parameters.get((location, name.lower()))


@dataclass(frozen=True, slots=True)
class _Scheme:
    name: str
    definition: Mapping[str, Any]

    @property
    def kind(self) -> str:
        return str(self.definition.get("type", ""))

    @property
    def location(self) -> str:
        return str(self.definition.get("in", ""))

    def mapped(self) -> tuple[AuthType, str | None] | None:
        """The contract's auth type (and header) for this scheme, when a contract can send it."""
        http_scheme = str(self.definition.get("scheme", "")).lower()
        if self.kind == "http" and http_scheme == "bearer":
            return AuthType.BEARER, None
        if self.kind == "http" and http_scheme == "basic":
            return AuthType.BASIC, None
        if self.kind in _TOKEN_SCHEMES:
            return AuthType.BEARER, None
        if (
            self.kind == "apiKey"
            and self.location == "header"
            and isinstance(self.definition.get("name"), str)
        ):
            return AuthType.API_KEY_HEADER, str(self.definition["name"])
        return None

    def describe(self) -> str:
        if self.kind == "apiKey":
            return f"an API key in the {self.location or '?'} {self.definition.get('name', '?')!r}"
        if self.kind == "http":
            return f"HTTP {self.definition.get('scheme', '?')} auth"
        return self.kind or "an untyped scheme"


def map_security(
    doc: Mapping[str, Any], resolver: RefResolver, *, api: str, operations: Iterable[OperationSecurity]
) -> Credentials:
    """Choose the backend auth, name the credential parameters, and list what is left to a human."""
    schemes = _declared(doc, resolver)
    ops = list(operations)
    credentials = Credentials()
    for scheme in schemes.values():
        if scheme.kind == "apiKey" and isinstance(scheme.definition.get("name"), str):
            key = (scheme.location, str(scheme.definition["name"]).lower())
            credentials.parameters[key] = f"the credential of security scheme {scheme.name}"
    headers = _credential_headers(ops)
    for header in headers:
        credentials.parameters.setdefault(("header", header.lower()), _BY_NAME)
    top = _requirements(doc.get("security"), schemes, "/security")
    per_op = {
        op.label: _requirements(op.security, schemes, None) if op.security is not None else top for op in ops
    }
    chosen = _choose(top, per_op, schemes)
    if chosen is None and headers:
        chosen = _Scheme(headers[0], {"type": "apiKey", "in": "header", "name": headers[0]})
        credentials.needs_human.append(
            ImportNote(
                f"header {headers[0]}",
                "looks like a credential but no security scheme declares it: it is sent from "
                "backend.auth, not by agents; check that this is right",
            )
        )
    if chosen is not None:
        credentials.auth = _auth(chosen, api, credentials)
    for header in headers:
        undeclared = credentials.parameters[("header", header.lower())] == _BY_NAME
        if undeclared and chosen is not None and chosen.name != header:
            credentials.needs_human.append(
                ImportNote(
                    f"header {header}",
                    f"looks like a credential, so it is no argument; backend.auth sends {chosen.name}: if "
                    "the API needs this header too, the contract cannot send it yet",
                )
            )
    _report_left_over(chosen, schemes, per_op, credentials)
    return credentials


def _declared(doc: Mapping[str, Any], resolver: RefResolver) -> dict[str, _Scheme]:
    components = doc.get("components")
    raw = components.get("securitySchemes") if isinstance(components, Mapping) else None
    if not isinstance(raw, Mapping):
        return {}
    schemes: dict[str, _Scheme] = {}
    for name, value in raw.items():
        definition, _ = resolver.follow(value, join_pointer("/components/securitySchemes", str(name)))
        schemes[str(name)] = _Scheme(str(name), definition if isinstance(definition, Mapping) else {})
    return schemes


def _requirements(security: Any, schemes: Mapping[str, _Scheme], pointer: str | None) -> list[frozenset[str]]:
    """The alternatives of a `security` list, each a set of scheme names that must all be sent."""
    if not isinstance(security, list):
        return []
    alternatives: list[frozenset[str]] = []
    for requirement in security:
        if not isinstance(requirement, Mapping):
            continue
        names = frozenset(str(name) for name in requirement)
        unknown = sorted(names - set(schemes))
        if unknown and pointer is not None:
            raise OpenApiError(
                f"security requirement names the undeclared scheme {unknown[0]!r}",
                pointer=join_pointer("/components/securitySchemes", unknown[0]),
                hint="declare it under components.securitySchemes",
            )
        alternatives.append(names)
    return alternatives


def _choose(
    top: list[frozenset[str]], per_op: Mapping[str, list[frozenset[str]]], schemes: Mapping[str, _Scheme]
) -> _Scheme | None:
    """The document-level scheme a contract can send, else the one most operations accept alone."""
    for alternative in top:
        for name in sorted(alternative):
            if name in schemes and schemes[name].mapped() is not None:
                return schemes[name]
    counts = {
        name: sum(1 for alternatives in per_op.values() if frozenset({name}) in alternatives)
        for name, scheme in schemes.items()
        if scheme.mapped() is not None
    }
    best = max(counts.values(), default=0)
    if best == 0:
        return None
    return next(schemes[name] for name in schemes if counts.get(name) == best)


def _auth(scheme: _Scheme, api: str, credentials: Credentials) -> dict[str, Any]:
    mapped = scheme.mapped()
    assert mapped is not None, "only a scheme a contract can send is chosen"
    kind, header = mapped
    given = scheme.definition.get(SECRET_EXTENSION)
    secret = (
        given
        if isinstance(given, str) and _SECRET.match(given)
        else snake_case(f"{api}_{scheme.name}").upper()
    )
    if scheme.kind in _TOKEN_SCHEMES:
        credentials.needs_human.append(
            ImportNote(
                f"security scheme {scheme.name}",
                f"{scheme.kind}: obtain an access token for the gateway ({_flows(scheme)}) and keep it in "
                f"the secret {secret}; it is sent as a bearer token and not refreshed by the gateway",
            )
        )
    elif secret != given:
        credentials.needs_human.append(
            ImportNote("backend.auth", f"reads the secret {secret}; define it before serving")
        )
    auth: dict[str, Any] = {"type": kind.value, "secret": secret}
    if header is not None:
        auth["header"] = header
    return auth


def _flows(scheme: _Scheme) -> str:
    flows = scheme.definition.get("flows")
    if isinstance(flows, Mapping) and flows:
        return "flows: " + ", ".join(map(str, flows))
    url = scheme.definition.get("openIdConnectUrl")
    return f"discovery at {url}" if isinstance(url, str) else "no flow declared"


def _report_left_over(
    chosen: _Scheme | None,
    schemes: Mapping[str, _Scheme],
    per_op: Mapping[str, list[frozenset[str]]],
    credentials: Credentials,
) -> None:
    used = {name for alternatives in per_op.values() for alternative in alternatives for name in alternative}
    for name in schemes:
        scheme = schemes[name]
        if name not in used:
            credentials.notes.append(
                ImportNote(f"security scheme {name}", "declared but no operation uses it")
            )
        elif scheme.mapped() is None:
            credentials.needs_human.append(
                ImportNote(
                    f"security scheme {name}",
                    f"{scheme.describe()} cannot be sent by a contract (it sends bearer, basic or a header "
                    "key); the operations that need it will be refused by the backend until it is solved",
                )
            )
    if chosen is None:
        return
    for label, alternatives in per_op.items():
        if alternatives and frozenset() not in alternatives and frozenset({chosen.name}) not in alternatives:
            needed = " or ".join(" + ".join(sorted(a)) for a in alternatives)
            credentials.needs_human.append(
                ImportNote(label, f"needs {needed}, but backend.auth sends {chosen.name}; check access")
            )


def _credential_headers(ops: Iterable[OperationSecurity]) -> list[str]:
    """Header parameters called like credentials, in document order, each once."""
    found: dict[str, str] = {}
    for op in ops:
        for param in op.parameters:
            name = param.get("name")
            if param.get("in") == "header" and isinstance(name, str) and name.lower() in _CREDENTIAL_HEADERS:
                found.setdefault(name.lower(), name)
    return list(found.values())
