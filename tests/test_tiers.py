"""The tiers are read from the code (tests/support/tiers.py), and the fast tier stays in process."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.tiers import E2E, FAST, INTEGRATION, _Reader

COLONNADE = Path(sys.executable).with_name("colonnade")


def _pure() -> int:
    return sum(range(3))


def _backend_process() -> None:
    subprocess.run([sys.executable, "-m", "tests.support.fault_backend", "--help"], check=False)


def _product_process() -> None:
    subprocess.run([str(COLONNADE), "--version"], check=False)


def _calls_a_helper_that_starts_the_product() -> None:
    _product_process()


class _Server:
    def start(self) -> None:
        _backend_process()


def _uses_a_class_whose_method_starts_a_process() -> None:
    _Server().start()


def _configures_a_stdio_server() -> dict[str, object]:
    return {"name": "s", "transport": "stdio", "command": sys.executable, "args": ["server.py"]}


@pytest.mark.parametrize(
    ("code", "tier"),
    [
        (_pure, FAST),
        (_backend_process, INTEGRATION),
        (_product_process, E2E),
        (_calls_a_helper_that_starts_the_product, E2E),
        (_uses_a_class_whose_method_starts_a_process, INTEGRATION),
        (_configures_a_stdio_server, E2E),
    ],
)
def test_a_tier_is_read_from_the_code_and_what_it_reaches(code: object, tier: str) -> None:
    assert _Reader().needs(code).tier == tier


def test_this_suites_own_tests_have_their_tiers(request: pytest.FixtureRequest) -> None:
    assert request.node.get_closest_marker(FAST) is not None  # this test starts nothing


HIDDEN = '''
import importlib


def test_starts_a_process_the_reading_cannot_see():
    importlib.import_module("subprocess").run(["true"], check=True)


def test_stays_in_process():
    assert True
'''


@pytest.fixture
def inner(pytester: pytest.Pytester) -> Iterator[pytest.Pytester]:
    pytester.makepyfile(test_hidden=HIDDEN)
    yield pytester


@pytest.mark.integration  # the inner test's process is started in this one's
def test_a_fast_test_that_starts_a_process_fails_and_says_how_to_mark_it(inner: pytest.Pytester) -> None:
    options = ("-p", "no:cacheprovider", "-o", "asyncio_default_fixture_loop_scope=function")
    result = inner.runpytest_inprocess("-p", "tests.support.tiers", "-m", "fast", *options)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*in the fast tier but started a process (true)*@pytest.mark.integration*"])
