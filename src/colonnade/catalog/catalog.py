"""The catalog: every tool the gateway can serve right now, and the events that say when that changes.

For each API it serves the tools of the latest published, non-deprecated version (semantic
version precedence), so deprecating the latest version falls back to the previous one. Tools from
other sources (downstream MCP servers, organs, built-ins) enter through `add_tools`.

Reads never take the lock: each change builds a new immutable view and swaps it in whole, so a
reader sees either the old tool set or the new one. Listeners run after the swap, outside the lock.
Each view also indexes tools by their bare name (the operation segment of the canonical name, i.e.
the contract's `llm.tool_name`), so a caller may use it as an alias in O(1) (`aliased`); whether
the alias is unique is for the caller's view of the catalog (`governance/tool_lookup.py`) to say.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import bisect
import difflib
import inspect
import logging
import threading
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from colonnade.catalog.catalog_errors import (
    InvalidCanonicalName,
    InvalidCursor,
    NotInCatalog,
    ToolConflict,
    WireNameCollision,
)
from colonnade.catalog.naming import WireProfile, split_canonical, wire_name_pattern
from colonnade.catalog.projection import project_contract
from colonnade.catalog.tool import Tool
from colonnade.contracts.model import Contract, ContractStatus
from colonnade.contracts.semver import VersionRange, parse_semver

__all__ = ["ApiVersion", "Catalog", "CatalogChange", "Listener"]

_log = logging.getLogger(__name__)

Listener = Callable[["CatalogChange"], object]
"""A callable given each change; it may return an awaitable, which is run on the event loop."""

_ApiKey = tuple[str, str]


@dataclass(frozen=True, slots=True)
class CatalogChange:
    """What one publish/deprecate/remove did to the served tool set; falsy when nothing changed."""

    added: tuple[Tool, ...] = ()
    removed: tuple[Tool, ...] = ()
    updated: tuple[Tool, ...] = ()
    reason: str = ""
    version: int = 0

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.updated)


@dataclass(frozen=True, slots=True)
class ApiVersion:
    """One published version of one API, as listed for operators."""

    tenant: str
    api: str
    version: str
    deprecated: bool
    active: bool
    tools: int


@dataclass(frozen=True, slots=True)
class _Published:
    contract: Contract
    tools: tuple[Tool, ...]
    deprecated: bool


@dataclass(frozen=True, slots=True)
class _View:
    tools: tuple[Tool, ...]
    names: tuple[str, ...]
    by_name: dict[str, Tool]
    by_wire: dict[str, Tool]
    by_alias: dict[str, tuple[Tool, ...]]


_EMPTY_VIEW = _View((), (), {}, {}, {})


@dataclass(slots=True)
class _Subscription:
    listener: Listener
    loop: asyncio.AbstractEventLoop | None


class Catalog:
    """In-memory tool catalog with versioned contracts, deterministic order and change events."""

    def __init__(self, *, profile: WireProfile = "strict") -> None:
        wire_name_pattern(profile)  # an unknown profile fails here, not at the first publish
        self.profile: WireProfile = profile
        self._lock = threading.Lock()
        self._apis: dict[_ApiKey, dict[str, _Published]] = {}
        self._sources: dict[str, tuple[Tool, ...]] = {}
        self._view = _EMPTY_VIEW
        self._version = 0
        self._subscriptions: list[_Subscription] = []
        self._pending: set[asyncio.Task[None]] = set()

    # -- reading -----------------------------------------------------------------------------

    @property
    def version(self) -> int:
        """Increases by one with every change to the served tool set."""
        return self._version

    def tools(self) -> tuple[Tool, ...]:
        """Every served tool, sorted by canonical name."""
        return self._view.tools

    def get(self, name: str) -> Tool | None:
        """A served tool by canonical name or by wire name."""
        view = self._view
        return view.by_name.get(name) or view.by_wire.get(name)

    def aliased(self, name: str) -> tuple[Tool, ...]:
        """Served tools whose bare name (`llm.tool_name`, the canonical name's last segment) is `name`.

        In canonical-name order; one tool when the bare name is unique in the catalog.
        """
        return self._view.by_alias.get(name, ())

    def near(self, name: str, limit: int = 3) -> list[str]:
        """Canonical, wire or bare names close to `name`, closest first: the "did you mean" of a typo."""
        view = self._view
        names = [n for tool in view.tools for n in (tool.canonical_name, tool.wire_name)]
        names.extend(a for a in view.by_alias if a not in view.by_name and a not in view.by_wire)
        return list(dict.fromkeys(difflib.get_close_matches(name, names, n=limit)))

    def tool_versions(self, name: str) -> dict[str, Tool]:
        """Every published version (deprecated ones included) of the tool with this canonical or wire name.

        A tool of another source (a downstream server, an organ) has one version, the one it is
        served at, so a call pinned to that version (an approved call resumed) finds it.
        """
        found: dict[str, Tool] = {}
        for versions in self._apis.values():
            for version, entry in versions.items():
                for tool in entry.tools:
                    if name in (tool.canonical_name, tool.wire_name):
                        found[version] = tool
        for tools in self._sources.values():
            for tool in tools:
                if name in (tool.canonical_name, tool.wire_name) and _is_semver(tool.version):
                    found.setdefault(tool.version, tool)
        return found

    def pinned(self, tenant: str, api: str, wanted: VersionRange) -> tuple[str, tuple[Tool, ...]] | None:
        """The highest published version of an API that `wanted` matches (deprecated ones included, as
        for a pinned call) and its tools; None when none matches."""
        versions = self._apis.get((tenant, api), {})
        matching = sorted((v for v in versions if wanted.matches(v)), key=parse_semver)
        if not matching:
            return None
        return matching[-1], versions[matching[-1]].tools

    def page(
        self, cursor: str | None, limit: int, include: Callable[[Tool], bool] | None = None
    ) -> tuple[list[Tool], str | None]:
        """Up to `limit` tools after `cursor`; the next cursor stays valid when tools come and go.

        With `include`, the page holds only the tools it accepts (what one caller may see): the
        cursor is still the last canonical name shown, so paging a filtered view is as stable as
        paging the whole catalog, and a cursor never tells which hidden tools lie between pages.
        """
        if limit < 1:
            raise ValueError(f"page limit must be at least 1, got {limit}")
        view = self._view
        start = 0 if cursor is None else bisect.bisect_right(view.names, _decode_cursor(cursor))
        if include is None:
            tools = list(view.tools[start : start + limit])
            more = start + limit < len(view.tools)
        else:
            tools, more = _filtered(view.tools, start, limit, include)
        return tools, (_encode_cursor(tools[-1].canonical_name) if more and tools else None)

    def active_version(self, tenant: str, api: str) -> str | None:
        """The version of an API whose tools are served, or None."""
        return _active(self._apis.get((tenant, api), {}))

    def api_versions(self) -> list[ApiVersion]:
        """Every published version of every API, oldest first within an API."""
        rows: list[ApiVersion] = []
        for (tenant, api), versions in sorted(self._apis.items()):
            active = _active(versions)
            for version in sorted(versions, key=parse_semver):
                entry = versions[version]
                rows.append(
                    ApiVersion(tenant, api, version, entry.deprecated, version == active, len(entry.tools))
                )
        return rows

    def __len__(self) -> int:
        return len(self._view.tools)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    # -- changing ----------------------------------------------------------------------------

    def publish(self, contract: Contract) -> CatalogChange:
        """Add (or replace) one version of an API; a document marked deprecated is kept but not served."""
        tools = tuple(project_contract(contract, profile=self.profile))
        entry = _Published(contract, tools, deprecated=contract.status is ContractStatus.DEPRECATED)
        key = (contract.tenant, contract.name)
        with self._lock:
            apis = dict(self._apis)
            apis[key] = {**apis.get(key, {}), contract.version: entry}
            change = self._commit(apis, self._sources, f"publish {_label(key, contract.version)}")
        return self._announce(change)

    def deprecate(self, tenant: str, api: str, version: str) -> CatalogChange:
        """Stop serving one version; the API falls back to its latest remaining version."""
        key = (tenant, api)
        with self._lock:
            versions = self._versions_of(key, version)
            contract = versions[version].contract.model_copy(update={"status": ContractStatus.DEPRECATED})
            tools = tuple(project_contract(contract, profile=self.profile))
            apis = {**self._apis, key: {**versions, version: _Published(contract, tools, deprecated=True)}}
            change = self._commit(apis, self._sources, f"deprecate {_label(key, version)}")
        return self._announce(change)

    def remove(self, tenant: str, api: str, version: str | None = None) -> CatalogChange:
        """Forget one version of an API, or the whole API when `version` is None."""
        key = (tenant, api)
        with self._lock:
            versions = self._versions_of(key, version)
            apis = dict(self._apis)
            remaining = {} if version is None else {v: e for v, e in versions.items() if v != version}
            if remaining:
                apis[key] = remaining
            else:
                del apis[key]
            change = self._commit(apis, self._sources, f"remove {_label(key, version)}")
        return self._announce(change)

    def add_tools(self, source_id: str, tools: Iterable[Tool]) -> CatalogChange:
        """Serve the tools of a non-contract source, replacing what that source served before."""
        incoming = tuple(tools)
        with self._lock:
            sources = {**self._sources, source_id: incoming}
            change = self._commit(self._apis, sources, f"add tools of source {source_id!r}")
        return self._announce(change)

    def remove_source(self, source_id: str) -> CatalogChange:
        with self._lock:
            if source_id not in self._sources:
                raise NotInCatalog(f"tool source {source_id!r}", sorted(self._sources))
            sources = {k: v for k, v in self._sources.items() if k != source_id}
            change = self._commit(self._apis, sources, f"remove source {source_id!r}")
        return self._announce(change)

    # -- change events -------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call `listener` with every non-empty change; returns a function that unsubscribes it.

        An async listener runs as a task on the event loop that was running when it subscribed
        (or the one running at the change), so it may be notified from another thread.
        """
        subscription = _Subscription(listener, _running_loop())
        self._subscriptions.append(subscription)

        def unsubscribe() -> None:
            if subscription in self._subscriptions:
                self._subscriptions.remove(subscription)

        return unsubscribe

    async def drain(self) -> None:
        """Wait until the async listeners started on this loop have handled every change so far."""
        loop = asyncio.get_running_loop()
        while mine := [task for task in self._pending if task.get_loop() is loop]:
            await asyncio.gather(*mine, return_exceptions=True)

    # -- internals -----------------------------------------------------------------------------

    def _versions_of(self, key: _ApiKey, version: str | None) -> dict[str, _Published]:
        versions = self._apis.get(key)
        if versions is None or (version is not None and version not in versions):
            known = [
                _label(k, v) for k, vs in sorted(self._apis.items()) for v in sorted(vs, key=parse_semver)
            ]
            raise NotInCatalog(_label(key, version), known)
        return versions

    def _commit(
        self,
        apis: dict[_ApiKey, dict[str, _Published]],
        sources: dict[str, tuple[Tool, ...]],
        reason: str,
    ) -> CatalogChange:
        """Build the view the new state serves (raising before anything changes), then swap it in."""
        view = _build_view(apis, sources)
        old = self._view
        added = tuple(t for t in view.tools if t.canonical_name not in old.by_name)
        removed = tuple(t for t in old.tools if t.canonical_name not in view.by_name)
        updated = tuple(
            t
            for t in view.tools
            if t.canonical_name in old.by_name and old.by_name[t.canonical_name].digest != t.digest
        )
        self._apis, self._sources, self._view = apis, sources, view
        if added or removed or updated:
            self._version += 1
        return CatalogChange(added, removed, updated, reason, self._version)

    def _announce(self, change: CatalogChange) -> CatalogChange:
        if change:
            for subscription in list(self._subscriptions):
                self._notify(subscription, change)
        return change

    def _notify(self, subscription: _Subscription, change: CatalogChange) -> None:
        try:
            result = subscription.listener(change)
        except Exception:
            _log.exception("catalog listener %r failed on %s", subscription.listener, change.reason)
            return
        if inspect.isawaitable(result):
            self._schedule(result, subscription.loop, change.reason)

    def _schedule(
        self, awaitable: Awaitable[Any], loop: asyncio.AbstractEventLoop | None, reason: str
    ) -> None:
        current = _running_loop()
        target = loop if loop is not None and not loop.is_closed() else current
        coroutine = _run_listener(awaitable, reason)
        if target is None:
            coroutine.close()
            _log.error("async catalog listener for %s dropped: no event loop is running", reason)
        elif target is current:
            task = target.create_task(coroutine)
            self._pending.add(task)
            task.add_done_callback(self._pending.discard)
        else:
            asyncio.run_coroutine_threadsafe(coroutine, target)


async def _run_listener(awaitable: Awaitable[Any], reason: str) -> None:
    try:
        await awaitable
    except Exception:
        _log.exception("async catalog listener failed on %s", reason)


def _build_view(apis: dict[_ApiKey, dict[str, _Published]], sources: dict[str, tuple[Tool, ...]]) -> _View:
    owners: dict[str, str] = {}
    by_name: dict[str, Tool] = {}
    by_wire: dict[str, Tool] = {}
    for owner, tools in _served(apis, sources):
        for tool in tools:
            if tool.canonical_name in by_name:
                raise ToolConflict(tool.canonical_name, owners[tool.canonical_name], owner)
            clash = by_wire.get(tool.wire_name)
            if clash is not None:
                raise WireNameCollision(tool.wire_name, clash.canonical_name, tool.canonical_name)
            owners[tool.canonical_name] = owner
            by_name[tool.canonical_name] = tool
            by_wire[tool.wire_name] = tool
    names = tuple(sorted(by_name))
    tools = tuple(by_name[n] for n in names)
    return _View(tools, names, by_name, by_wire, _aliases(tools))


def _aliases(tools: tuple[Tool, ...]) -> dict[str, tuple[Tool, ...]]:
    """Bare names -> the tools that bear them: the operation segment, and `llm.tool_name` when it
    differs (an endpoint serving several methods suffixes each tool's segment with its method)."""
    found: dict[str, list[Tool]] = {}
    for tool in tools:
        bare = split_canonical(tool.canonical_name)[2]
        for alias in dict.fromkeys((bare, tool.llm.tool_name if tool.llm is not None else bare)):
            found.setdefault(alias, []).append(tool)
    return {alias: tuple(owners) for alias, owners in found.items()}


def _served(
    apis: dict[_ApiKey, dict[str, _Published]], sources: dict[str, tuple[Tool, ...]]
) -> Iterable[tuple[str, tuple[Tool, ...]]]:
    for key, versions in sorted(apis.items()):
        active = _active(versions)
        if active is not None:
            yield f"contract {_label(key, active)}", versions[active].tools
    for source_id, tools in sorted(sources.items()):
        yield f"tool source {source_id!r}", tools


def _filtered(
    tools: tuple[Tool, ...], start: int, limit: int, include: Callable[[Tool], bool]
) -> tuple[list[Tool], bool]:
    """The first `limit` included tools from `start`, and whether another included tool follows."""
    shown: list[Tool] = []
    for tool in tools[start:]:
        if include(tool):
            if len(shown) == limit:
                return shown, True
            shown.append(tool)
    return shown, False


def _active(versions: dict[str, _Published]) -> str | None:
    candidates = [v for v, entry in versions.items() if not entry.deprecated]
    return max(candidates, key=parse_semver) if candidates else None


def _is_semver(version: str) -> bool:
    try:
        parse_semver(version)
    except ValueError:
        return False
    return True


def _label(key: _ApiKey, version: str | None) -> str:
    return f"{key[0]}:{key[1]}" + (f"@{version}" if version is not None else "")


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _encode_cursor(name: str) -> str:
    return base64.urlsafe_b64encode(name.encode("utf-8")).decode("ascii").rstrip("=")


def _decode_cursor(cursor: str) -> str:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        name = base64.b64decode(padded, altchars=b"-_", validate=True).decode("utf-8")
        split_canonical(name)
    except (binascii.Error, UnicodeError, ValueError, InvalidCanonicalName):
        raise InvalidCursor(cursor) from None
    if _encode_cursor(name) != cursor:
        raise InvalidCursor(cursor)
    return name
