"""Bundles: named groups of tools an operator wants selected together.

Refunding an invoice takes a lookup, a refund and a notification; showing one without the others
leaves the agent stuck. A bundle is pulled in whole when the query names it, or when one of its
members is selected strongly (its score close to the best one).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from colonnade.routing.context import names

__all__ = ["Bundle", "Bundles"]


@dataclass(frozen=True, slots=True)
class Bundle:
    name: str
    tools: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.name.strip():
            raise ValueError("a bundle needs a name")
        if not self.tools:
            raise ValueError(f"bundle {self.name!r} lists no tools")


class Bundles:
    """The configured bundles, looked up by member."""

    def __init__(self, bundles: Iterable[Bundle] = ()) -> None:
        self._bundles = tuple(bundles)
        self._by_member: dict[str, list[Bundle]] = {}
        for bundle in self._bundles:
            for tool in bundle.tools:
                self._by_member.setdefault(tool, []).append(bundle)

    @classmethod
    def from_mapping(cls, groups: Mapping[str, Iterable[str]]) -> Bundles:
        """From the `routing.bundles` setting: bundle name -> canonical names."""
        return cls(Bundle(name, tuple(dict.fromkeys(tools))) for name, tools in sorted(groups.items()))

    def named_in(self, query_words: frozenset[str]) -> list[Bundle]:
        """The bundles the query names (`refunds`, `billing-admin` ...)."""
        return [bundle for bundle in self._bundles if names(query_words, bundle.name)]

    def of(self, tool: str) -> list[Bundle]:
        """The bundles a tool belongs to."""
        return self._by_member.get(tool, [])

    def __iter__(self) -> Iterator[Bundle]:
        return iter(self._bundles)

    def __len__(self) -> int:
        return len(self._bundles)

    def __bool__(self) -> bool:
        return bool(self._bundles)
