"""Semantic-version precedence (semver.org 2.0): `1.10.0` sorts after `1.9.0`, `1.0.0-rc.1` before `1.0.0`.

Versions are stored as text; ordering them as strings would be wrong, so every "latest" and
"newest first" in the store sorts with `key=parse_semver`.
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["SemVer", "parse_semver"]

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
