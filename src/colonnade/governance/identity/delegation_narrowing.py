"""What a delegated token may hold: never more than its parent, never more than its new actor.

Tool allow-lists hold canonical names and globs, where an exact name reaches any tool and a glob
reaches only tools safe for agents (`tool_access.allow_listed`). A requested entry is covered by
a list only when it provably reaches nothing the list does not: the same string; a glob inside
one of the list's globs (`*`, or a `prefix*` the entry starts with); or an exact name one of the
list's globs matches, when that tool is safe for agents (else the glob would not reach it, and
the exact name would). The test is sound, not complete: an entry it cannot prove is refused.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase

__all__ = ["Narrowed", "SafeForAgents", "covered", "narrow_scopes", "narrow_tools"]

SafeForAgents = Callable[[str], bool]
"""canonical name -> whether that tool is safe for agents (so a glob of an allow-list reaches it)."""

_GLOB = frozenset("*?[")


@dataclass(frozen=True, slots=True)
class Narrowed:
    """What a token may hold, or what of the request is wider than allowed (`wider` non-empty)."""

    granted: tuple[str, ...]
    wider: tuple[str, ...] = ()


def _is_glob(pattern: str) -> bool:
    return any(ch in _GLOB for ch in pattern)


def _glob_within(inner: str, outer: str) -> bool:
    """Whether the glob `inner` reaches only names the glob `outer` reaches."""
    if outer == "*":
        return True
    prefix = outer[:-1]
    return outer.endswith("*") and not _is_glob(prefix) and inner.startswith(prefix)


def _never(name: str) -> bool:
    return False


def covered(pattern: str, patterns: Iterable[str], safe: SafeForAgents = _never) -> bool:
    """Whether the allow-list entry `pattern` reaches only tools `patterns` reaches."""
    listed = tuple(patterns)
    if pattern in listed:
        return True
    globs = [outer for outer in listed if _is_glob(outer)]
    if not _is_glob(pattern):
        return safe(pattern) and any(fnmatchcase(pattern, outer) for outer in globs)
    return any(_glob_within(pattern, outer) for outer in globs)


def _within_all(pattern: str, lists: Sequence[Sequence[str]], safe: SafeForAgents) -> bool:
    return all(covered(pattern, bound, safe) for bound in lists)


def narrow_tools(
    requested: Sequence[str] | None, bounds: Sequence[Sequence[str] | None], safe: SafeForAgents = _never
) -> Narrowed:
    """The delegated allow-list: `requested` when every entry is covered by every bound (a bound of
    None sets no list, as a person's token); without a request, the entries of the bounds each
    covered by all the others (an under-approximation of their intersection, never wider)."""
    lists = [tuple(bound) for bound in bounds if bound is not None]
    if requested is not None:
        wider = tuple(pattern for pattern in requested if not _within_all(pattern, lists, safe))
        return Narrowed(tuple(dict.fromkeys(requested)), wider)
    if not lists:
        return Narrowed(())
    candidates = dict.fromkeys(pattern for bound in lists for pattern in bound)
    return Narrowed(tuple(pattern for pattern in candidates if _within_all(pattern, lists, safe)))


def narrow_scopes(requested: Iterable[str] | None, parent: frozenset[str]) -> Narrowed:
    """The delegated scopes: the parent's, or the requested ones when the parent holds them all.

    The token keeps the origin's scopes (so a person's write scope still counts for the person's
    side of the chain); the acting agent uses only those its persona allows, like any principal."""
    if requested is None:
        return Narrowed(tuple(sorted(parent)))
    asked = tuple(dict.fromkeys(requested))
    return Narrowed(tuple(sorted(asked)), tuple(scope for scope in asked if scope not in parent))
