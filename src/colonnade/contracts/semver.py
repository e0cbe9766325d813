"""Semantic versions (semver.org 2.0) and version ranges.

Precedence: `1.10.0` sorts after `1.9.0`, `1.0.0-rc.1` before `1.0.0`; versions are text in
documents and tables, so every "latest" sorts with `key=parse_semver`. Ranges use the familiar
npm forms: `1.2.3`, `^1.2`, `~1.2.0`, `1.x`, `1`, `*`, comparators (`>=1.0.0 <2.0.0`) and `||`.
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["SemVer", "VersionRange", "parse_range", "parse_semver"]

_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$"
)

_Identifier = tuple[int, int | str]


class SemVer(NamedTuple):
    """A parsed version whose tuple order is semver precedence; `build` only breaks ties."""

    major: int
    minor: int
    patch: int
    is_release: bool
    prerelease: tuple[_Identifier, ...]
    build: str

    def next_patch(self) -> str:
        """The smallest release after this one, suggested when a published version must not change."""
        if self.is_release:
            return f"{self.major}.{self.minor}.{self.patch + 1}"
        return f"{self.major}.{self.minor}.{self.patch}"


def parse_semver(text: str) -> SemVer:
    """Parse `MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]`; raise ValueError naming the bad text."""
    match = _SEMVER.match(text)
    if match is None:
        raise ValueError(f"{text!r} is not a semantic version (expected MAJOR.MINOR.PATCH, e.g. 1.4.0)")
    major, minor, patch, prerelease, build = match.groups()
    identifiers = tuple(_identifier(part) for part in prerelease.split(".")) if prerelease else ()
    return SemVer(int(major), int(minor), int(patch), prerelease is None, identifiers, build or "")


def _identifier(part: str) -> _Identifier:
    """Numeric identifiers compare numerically and rank below alphanumeric ones."""
    return (0, int(part)) if part.isdigit() else (1, part)


_Comparator = tuple[str, SemVer]
_PARTIAL = re.compile(r"^[v=]?(\d+|[xX*])(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?(?:-([0-9A-Za-z.-]+))?$")
_OPERATORS = (">=", "<=", ">", "<", "=")


class VersionRange:
    """A parsed range: alternatives (`||`) of comparator sets that must all hold."""

    def __init__(self, text: str, alternatives: list[list[_Comparator]], exact: str | None) -> None:
        self.text = text
        self._alternatives = alternatives
        self.exact = exact

    def matches(self, version: str) -> bool:
        parsed = parse_semver(version)
        if self.exact is not None:
            return version == self.exact
        if not parsed.is_release:
            return False  # pre-releases are only ever chosen by naming them exactly
        return any(all(_holds(parsed, op, bound) for op, bound in alt) for alt in self._alternatives)

    def __repr__(self) -> str:
        return f"VersionRange({self.text!r})"


def parse_range(text: str) -> VersionRange:
    """Parse a version or range; raise ValueError saying which part is not understood."""
    spec = text.strip()
    if not spec:
        raise ValueError("an empty version range; give a version (1.2.3) or a range (^1.2, 1.x, >=1 <2)")
    if _SEMVER.match(spec):
        return VersionRange(spec, [], spec)
    alternatives = [_alternative(part.strip(), text) for part in spec.split("||")]
    return VersionRange(spec, alternatives, None)


def _alternative(part: str, text: str) -> list[_Comparator]:
    if not part:
        raise ValueError(f"{text!r}: an empty alternative around '||' in the version range")
    comparators: list[_Comparator] = []
    for token in part.split():
        if token.startswith("^"):
            comparators.extend(_caret(token[1:], text))
        elif token.startswith("~"):
            comparators.extend(_tilde(token[1:], text))
        else:
            op = next((o for o in _OPERATORS if token.startswith(o)), "")
            comparators.extend(_comparator(op, token[len(op) :], text))
    return comparators


def _partial(token: str, text: str) -> tuple[int | None, int | None, int | None]:
    match = _PARTIAL.match(token)
    if match is None:
        raise ValueError(f"{text!r}: {token!r} is not a version or range part (e.g. 1.2.3, ^1.2, 1.x)")
    parts = [None if p is None or p in "xX*" else int(p) for p in match.groups()[:3]]
    return parts[0], parts[1], parts[2]


def _v(major: int, minor: int, patch: int) -> SemVer:
    return SemVer(major, minor, patch, True, (), "")


def _comparator(op: str, token: str, text: str) -> list[_Comparator]:
    major, minor, patch = _partial(token, text)
    if major is None:
        return []  # '*' matches every release
    low = _v(major, minor or 0, patch or 0)
    if op in ("", "=") and (minor is None or patch is None):
        high = _v(major + 1, 0, 0) if minor is None else _v(major, minor + 1, 0)
        return [(">=", low), ("<", high)]
    return [(op or "=", low)]


def _caret(token: str, text: str) -> list[_Comparator]:
    major, minor, patch = _partial(token, text)
    if major is None:
        return []
    low = _v(major, minor or 0, patch or 0)
    if major > 0 or minor is None:
        high = _v(major + 1, 0, 0)
    elif minor > 0 or patch is None:
        high = _v(0, minor + 1, 0)
    else:
        high = _v(0, 0, (patch or 0) + 1)
    return [(">=", low), ("<", high)]


def _tilde(token: str, text: str) -> list[_Comparator]:
    major, minor, patch = _partial(token, text)
    if major is None:
        return []
    low = _v(major, minor or 0, patch or 0)
    high = _v(major + 1, 0, 0) if minor is None else _v(major, minor + 1, 0)
    return [(">=", low), ("<", high)]


def _holds(version: SemVer, op: str, bound: SemVer) -> bool:
    key, limit = version[:5], bound[:5]
    return {
        "=": key == limit,
        ">=": key >= limit,
        ">": key > limit,
        "<=": key <= limit,
        "<": key < limit,
    }[op]
