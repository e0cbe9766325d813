"""Canonical names (`tenant:api:tool`) and the wire names clients see, in both directions.

Clients and LLM provider APIs reject `:` (and some reject `.`), so every tool also has a wire
name. The mapping is reversible:

- each segment is encoded on its own, then joined with the profile's separator (`__` for
  `strict`, `.` for `mcp`);
- letters, digits and `-` are kept; `_` is kept where it cannot be confused with the separator
  or an escape; every other character becomes an escape `-_<hex code point>-`;
- in the strict profile a `.` inside a name reads as `_` where a `_` would be kept
  (`similarity.search` -> `similarity_search`), else it is escaped (`-_2e-`); the mcp profile
  escapes it, `.` being its separator;
- the encoder never writes `-_` except to open an escape, and never writes `__` inside a
  strict segment nor `_` at its ends, so splitting and decoding are unambiguous.

A `.` read as `_` is the one place where two names can meet (`v1.search` and `v1_search`): the
wire name then stands for both, `from_wire` reads it as the `_` one, and the catalog (and a
`WireNames` registry) knows which tool holds it and refuses a second one with
`WireNameCollision`, naming both (the collision check).

So `acme:crm:search_customers` is `acme__crm__search_customers` on the wire. A name longer than
the profile allows is cut at an escape boundary and ends in `-_-` plus a hash of the canonical
name; the decoder never accepts `-_-`, so shortened names cannot collide with plain ones, and
they resolve through a `WireNames` registry, which also reports the (astronomically rare) hash
collision.
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass
from typing import Literal

from colonnade.catalog.catalog_errors import InvalidCanonicalName, WireNameCollision

__all__ = [
    "WireNames",
    "WireProfile",
    "from_wire",
    "join_canonical",
    "split_canonical",
    "to_wire",
    "wire_name_pattern",
]

WireProfile = Literal["strict", "mcp"]

_ESCAPE_OPEN = "-_"
_ESCAPE_CLOSE = "-"
_SHORTENED_MARK = "-_-"
_HASH_LENGTH = 10
_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_HEX = frozenset("0123456789abcdef")


@dataclass(frozen=True, slots=True)
class _Profile:
    name: str
    separator: str
    max_length: int
    pattern: re.Pattern[str]
    underscore_at_edges: bool
    double_underscore: bool
    dot_as_underscore: bool


_PROFILES: dict[str, _Profile] = {
    "strict": _Profile(
        name="strict",
        separator="__",
        max_length=64,
        pattern=re.compile(r"^[A-Za-z0-9_-]{1,64}$"),
        underscore_at_edges=False,
        double_underscore=False,
        dot_as_underscore=True,
    ),
    "mcp": _Profile(
        name="mcp",
        separator=".",
        max_length=128,
        pattern=re.compile(r"^[A-Za-z0-9_.-]{1,128}$"),
        underscore_at_edges=True,
        double_underscore=True,
        dot_as_underscore=False,
    ),
}


def split_canonical(name: str) -> tuple[str, str, str]:
    """`tenant:api:tool` -> its three segments; the tool segment may itself contain `:`."""
    parts = name.split(":", 2)
    if len(parts) != 3 or not all(parts):
        raise InvalidCanonicalName(name)
    return parts[0], parts[1], parts[2]


def join_canonical(tenant: str, api: str, tool: str) -> str:
    name = f"{tenant}:{api}:{tool}"
    if split_canonical(name) != (tenant, api, tool):
        raise InvalidCanonicalName(name)
    return name


def wire_name_pattern(profile: WireProfile = "strict") -> re.Pattern[str]:
    """What every wire name of the profile matches (shortened ones included)."""
    return _profile(profile).pattern


def to_wire(canonical: str, profile: WireProfile = "strict") -> str:
    """The wire name of a canonical name; shortened with a hash suffix when too long."""
    spec = _profile(profile)
    tokens = _encode_tokens(canonical, spec)
    wire = "".join(tokens)
    if len(wire) <= spec.max_length:
        return wire
    return _shorten(canonical, tokens, spec)


def from_wire(wire: str, profile: WireProfile = "strict") -> str | None:
    """The canonical name a plain (not shortened) wire name stands for, or None if it is not one.

    A `_` reads as `_`: a name whose `.` was written as `_` resolves through the catalog instead."""
    spec = _profile(profile)
    if not spec.pattern.match(wire):
        return None
    segments = wire.split(spec.separator)
    if len(segments) != 3:
        return None
    decoded: list[str] = []
    for segment in segments:
        part = _decode_segment(segment)
        if not part:
            return None
        decoded.append(part)
    canonical = ":".join(decoded)
    try:
        plain = to_wire(canonical, profile)
    except InvalidCanonicalName:
        return None
    return canonical if plain == wire else None


class WireNames:
    """Both directions for a set of names, including shortened ones; refuses collisions."""

    def __init__(self, profile: WireProfile = "strict") -> None:
        self.profile: WireProfile = profile
        self._to_wire: dict[str, str] = {}
        self._to_canonical: dict[str, str] = {}

    def add(self, canonical: str) -> str:
        """Register a canonical name and return its wire name; idempotent for the same name."""
        known = self._to_wire.get(canonical)
        if known is not None:
            return known
        wire = to_wire(canonical, self.profile)
        existing = self._to_canonical.get(wire)
        if existing is not None:
            raise WireNameCollision(wire, existing, canonical)
        self._to_wire[canonical] = wire
        self._to_canonical[wire] = canonical
        return wire

    def discard(self, canonical: str) -> None:
        wire = self._to_wire.pop(canonical, None)
        if wire is not None:
            del self._to_canonical[wire]

    def canonical(self, wire: str) -> str | None:
        return self._to_canonical.get(wire)

    def wire(self, canonical: str) -> str | None:
        return self._to_wire.get(canonical)

    def __contains__(self, canonical: object) -> bool:
        return canonical in self._to_wire

    def __len__(self) -> int:
        return len(self._to_wire)


def _profile(name: str) -> _Profile:
    spec = _PROFILES.get(name)
    if spec is None:
        raise ValueError(f"unknown wire name profile {name!r}: use one of {', '.join(sorted(_PROFILES))}")
    return spec


def _encode_tokens(canonical: str, spec: _Profile) -> list[str]:
    """The wire name as a list of tokens (characters, escapes, separators) so it can be cut cleanly."""
    tokens: list[str] = []
    for index, segment in enumerate(split_canonical(canonical)):
        if index:
            tokens.append(spec.separator)
        tokens.extend(_encode_segment(segment, spec))
    return tokens


def _encode_segment(segment: str, spec: _Profile) -> list[str]:
    tokens: list[str] = []
    last = len(segment) - 1
    for position, char in enumerate(segment):
        previous = tokens[-1][-1] if tokens else ""
        at_edge = position == 0 or position == last
        if char in _ALNUM or char == "-" or (char == "_" and _underscore_is_literal(previous, at_edge, spec)):
            tokens.append(char)
        elif char == "." and spec.dot_as_underscore and _underscore_is_literal(previous, at_edge, spec):
            tokens.append("_")
        else:
            tokens.append(f"{_ESCAPE_OPEN}{ord(char):x}{_ESCAPE_CLOSE}")
    return tokens


def _underscore_is_literal(previous: str, at_edge: bool, spec: _Profile) -> bool:
    """`_` stays readable unless it would open an escape (`-_`) or blur the `__` separator."""
    if previous == "-":
        return False
    if at_edge and not spec.underscore_at_edges:
        return False
    return not (previous == "_" and not spec.double_underscore)


def _decode_segment(segment: str) -> str | None:
    out: list[str] = []
    position = 0
    while position < len(segment):
        if segment.startswith(_ESCAPE_OPEN, position):
            end = segment.find(_ESCAPE_CLOSE, position + len(_ESCAPE_OPEN))
            digits = segment[position + len(_ESCAPE_OPEN) : end] if end >= 0 else ""
            if not digits or not set(digits) <= _HEX or len(digits) > 6 or int(digits, 16) > 0x10FFFF:
                return None
            out.append(chr(int(digits, 16)))
            position = end + len(_ESCAPE_CLOSE)
        else:
            out.append(segment[position])
            position += 1
    return "".join(out)


def _shorten(canonical: str, tokens: list[str], spec: _Profile) -> str:
    digest = hashlib.sha256(canonical.encode("utf-8")).digest()
    suffix = _SHORTENED_MARK + base64.b32encode(digest).decode("ascii").lower()[:_HASH_LENGTH]
    budget = spec.max_length - len(suffix)
    prefix: list[str] = []
    used = 0
    for token in tokens:
        if used + len(token) > budget:
            break
        prefix.append(token)
        used += len(token)
    return "".join(prefix) + suffix
