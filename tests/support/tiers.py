"""The suite's three tiers, given to every test at collection time, so a new test lands in its tier by itself.

- `fast`: in process; loopback servers in threads and SQLite files are fine; no child process, no
  PostgreSQL, no Redis. `make check` runs this tier.
- `integration`: PostgreSQL, Redis, or a loopback backend in a child process (the fault backend, the
  demo backend).
- `e2e`: the product in a child process (`colonnade ...`, `python -m colonnade...`), real third-party
  servers (stdio MCP servers, node, git), the browser.

A test's tier is the highest that any part of it needs. Explicit markers count (`e2e`, `browser`,
`integration`, `postgres`, `redis`); then the folder (tests/e2e, tests/federation and
tests/conformance are end to end); then what the code does: the test function, every fixture it
uses, and every function or class of `tests/` those reach through their global names are read for
what starts a process and what that process is. Reading the code rather than keeping a list of
names keeps the tiers true while others add tests and fixtures.

In the fast tier a test that starts a process anyway (the reading missed it) fails and says how to
mark it, so `make check` stays in process and these rules stay honest.
"""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

__all__ = ["E2E", "FAST", "INTEGRATION", "TIERS"]

FAST, INTEGRATION, E2E = "fast", "integration", "e2e"
TIERS = (FAST, INTEGRATION, E2E)
_RANK = {tier: rank for rank, tier in enumerate(TIERS)}

_TESTS = Path(__file__).resolve().parents[1]
_TESTS_PREFIX = f"{_TESTS}/"
_E2E_FOLDERS = ("e2e", "federation", "conformance")
_MARKS = {
    "e2e": E2E,
    "browser": E2E,
    "integration": INTEGRATION,
    "postgres": INTEGRATION,
    "redis": INTEGRATION,
}
_INTEGRATION_FIXTURES = {"postgres_url", "redis_url", "own_redis"}
_BIN = Path(sys.executable).parent

# What starts a child process.
_PROCESS = re.compile(
    r"subprocess\.(run|Popen|call|check_call|check_output)\b|\bPopen\(|create_subprocess_(exec|shell)"
    r"|\bos\.(fork|posix_spawn|spawn\w*|exec\w*)\(|\bmultiprocessing\b|[\"']command[\"']: sys\.executable"
)
# What makes a process the product, a third-party server or a browser rather than a loopback backend.
_PRODUCT = re.compile(
    r"with_name\([\"']colonnade[\"']\)|[\"']bin[\"'] / [\"']colonnade[\"']|[\"']-m[\"'], [\"']colonnade\b"
    r"|mcp-server-|[\"']node[\"']|\bnpx\b|chromium|playwright|[\"']transport[\"']: [\"']stdio[\"']"
    r"|[\"']git[\"'], "
)
_REDIS = re.compile(r"redis://|:6379\b")


class _Needs:
    """What some test code and everything it reaches needs: a process, the product's, Redis."""

    __slots__ = ("process", "product", "redis")

    def __init__(self, process: bool = False, product: bool = False, redis: bool = False) -> None:
        self.process, self.product, self.redis = process, product, redis

    def add(self, other: _Needs) -> None:
        self.process |= other.process
        self.product |= other.product
        self.redis |= other.redis

    @property
    def tier(self) -> str:
        if self.process:
            return E2E if self.product else INTEGRATION
        return INTEGRATION if self.redis else FAST


class _Reader:
    """Reads test code and what it reaches within tests/, once per object."""

    def __init__(self) -> None:
        self._needs: dict[int, _Needs] = {}

    def needs(self, obj: Any) -> _Needs:
        key = id(obj)
        if key in self._needs:
            return self._needs[key]
        needs = self._needs[key] = _Needs()  # a cycle meets this record before it is complete
        try:
            source = inspect.getsource(obj)
        except (OSError, TypeError):
            source = ""
        needs.process = bool(_PROCESS.search(source))
        needs.product = bool(_PRODUCT.search(source))
        needs.redis = bool(_REDIS.search(source))
        for value in _reached(obj):
            if isinstance(value, Path):
                needs.product |= value.parent == _BIN  # a console script of this environment
            else:
                needs.add(self.needs(value))
        return needs


def _reached(obj: Any) -> Iterator[Any]:
    """What `obj` names through its globals, nested code and methods included: functions and classes of
    tests/, and paths (a console script run as a process is named by its path)."""
    functions: list[types.FunctionType] = []
    if isinstance(obj, type):
        for value in vars(obj).values():
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            elif isinstance(value, property):
                value = value.fget
            if isinstance(value, types.FunctionType):
                functions.append(value)
    elif isinstance(obj, types.FunctionType):
        functions = [obj]
    for function in functions:
        for name in set(_names(function.__code__)):
            value = function.__globals__.get(name)
            if isinstance(value, Path) or _ours(value):
                yield value


def _names(code: types.CodeType) -> Iterator[str]:
    yield from code.co_names
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _names(const)


def _ours(value: Any) -> bool:
    """A function or class written in tests/ (not the product, not a library)."""
    value = getattr(value, "__wrapped__", value)
    if isinstance(value, types.FunctionType):
        filename = value.__code__.co_filename
    elif isinstance(value, type):
        filename = getattr(sys.modules.get(value.__module__), "__file__", None) or ""
    else:
        return False
    return filename.startswith(_TESTS_PREFIX)


def _fixture_functions(item: pytest.Item) -> Iterator[Callable[..., Any]]:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return
    for name in info.names_closure:
        for definition in info.name2fixturedefs.get(name, ()):
            function = getattr(definition, "func", None)
            if function is not None:
                yield function


def tier_of(item: pytest.Item, reader: _Reader) -> str:
    tier = FAST
    for mark in item.iter_markers():
        tier = max(tier, _MARKS.get(mark.name, FAST), key=_RANK.__getitem__)
    path = Path(str(item.path)).resolve()
    if path.is_relative_to(_TESTS) and path.relative_to(_TESTS).parts[0] in _E2E_FOLDERS:
        return E2E
    if _INTEGRATION_FIXTURES & set(getattr(item, "fixturenames", ())):
        tier = max(tier, INTEGRATION, key=_RANK.__getitem__)
    function = getattr(item, "function", None)
    needs = _Needs()
    for part in [function, *_fixture_functions(item)] if function is not None else _fixture_functions(item):
        needs.add(reader.needs(getattr(part, "__wrapped__", part)))
    return max(tier, needs.tier, key=_RANK.__getitem__)


_TIER = pytest.StashKey[str]()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "fast: in process; no child process, PostgreSQL or Redis (make check)")
    config.addinivalue_line("markers", "integration: PostgreSQL, Redis or a loopback backend in a process")
    config.addinivalue_line("markers", "redis: needs Redis at 127.0.0.1:6379")


# pytest-timeout's cap per test (pyproject: 120 s) is a guard against hangs; a test that waits for
# processes gets more, as its waits grow with the machine's load (tests/support/machine_load.py).
_PROCESS_TEST_TIMEOUT_S = 360


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    reader = _Reader()
    for item in items:
        tier = tier_of(item, reader)
        item.add_marker(tier)
        item.stash[_TIER] = tier
        if tier != FAST and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(_PROCESS_TEST_TIMEOUT_S))


def _guarded(item: pytest.Item) -> Iterator[None]:
    """Run one phase of a fast test; fail it if it started a process (the reading missed it)."""
    if item.stash.get(_TIER, FAST) != FAST:
        return (yield)
    started: list[str] = []
    original = subprocess.Popen.__init__

    def recording(self: subprocess.Popen[Any], args: Any, *rest: Any, **kwargs: Any) -> None:
        started.append(" ".join(map(str, args)) if isinstance(args, (list, tuple)) else str(args))
        original(self, args, *rest, **kwargs)

    subprocess.Popen.__init__ = recording  # type: ignore[method-assign]
    try:
        result = yield
    finally:
        subprocess.Popen.__init__ = original  # type: ignore[method-assign]
    if started:
        raise pytest.fail.Exception(
            f"this test is in the fast tier but started a process ({started[0][:200]}); mark it "
            "`@pytest.mark.integration` (a loopback backend) or `@pytest.mark.e2e` (the product or a "
            "third-party server), or teach tests/support/tiers.py how its code shows it",
            pytrace=False,
        )
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    return (yield from _guarded(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    return (yield from _guarded(item))
