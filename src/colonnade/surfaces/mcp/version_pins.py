"""Pinned `tools/list`: a caller that pins an API's version sees that version's tools.

A client names its pins in `_meta["colonnade/request"].tool_versions` on `tools/list`, a mapping of
`tenant:api` to a version or range within one major (`{"acme:orders": "^1"}`, as a call's
`tool_version`). The listing then shows, for each pinned API, the tools of the highest published
version the pin matches (a deprecated one too, until its sunset) in place of the newest's; the other
APIs are listed as usual. Calls name the same pin in their own `tool_version`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from colonnade.calls.envelope import REQUEST_META_KEY
from colonnade.catalog.catalog import Catalog
from colonnade.catalog.tool import Tool
from colonnade.contracts.semver import VersionRange, parse_range

__all__ = ["PIN_FIELD", "VersionPins", "VersionPinsError"]

PIN_FIELD = "tool_versions"
_MAX_PINS = 100


class VersionPinsError(ValueError):
    """Pins that cannot be read: the message says which and how to write them."""


@dataclass(frozen=True, slots=True)
class VersionPins:
    ranges: Mapping[tuple[str, str], VersionRange]

    @classmethod
    def from_meta(cls, meta: Mapping[str, Any] | None) -> VersionPins | None:
        """The pins of a request's `_meta` (None when it names none)."""
        request = (meta or {}).get(REQUEST_META_KEY)
        if not isinstance(request, Mapping) or PIN_FIELD not in request:
            return None
        pins = request[PIN_FIELD]
        where = f'_meta["{REQUEST_META_KEY}"].{PIN_FIELD}'
        if not isinstance(pins, Mapping) or len(pins) > _MAX_PINS:
            raise VersionPinsError(
                f'{where} is an object of at most {_MAX_PINS} "tenant:api": "version or range" pairs, '
                'e.g. {"acme:orders": "^1"}'
            )
        ranges: dict[tuple[str, str], VersionRange] = {}
        for api, spec in pins.items():
            tenant, _, name = str(api).partition(":")
            if not tenant or not name or ":" in name or not isinstance(spec, str):
                raise VersionPinsError(
                    f'{where}: {str(api)[:80]!r} is not "tenant:api" with a version string'
                )
            try:
                ranges[(tenant, name)] = parse_range(spec)
            except ValueError as exc:
                raise VersionPinsError(f"{where}[{str(api)!r}]: {exc}") from None
        return cls(ranges)

    def listing_filter(self, visible: Callable[[Tool], bool] | None) -> Callable[[Tool], bool]:
        """The served tools to page through: those the caller may see, of the APIs not pinned."""

        def include(tool: Tool) -> bool:
            return (tool.tenant, tool.api) not in self.ranges and (visible is None or visible(tool))

        return include

    def tools(self, catalog: Catalog) -> list[Tool]:
        """The pinned versions' tools, API by API (an API no version of which matches shows none)."""
        shown: list[Tool] = []
        for (tenant, api), wanted in sorted(self.ranges.items()):
            found = catalog.pinned(tenant, api, wanted)
            if found is not None:
                shown.extend(found[1])
        return shown
