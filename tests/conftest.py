"""Shared fixtures: paths into the repository."""

from __future__ import annotations

from pathlib import Path

import pytest
import regopy  # noqa: F401  (its first import runs `uname -p`: here, at collection, not in a fast test)
from hypothesis import settings

pytest_plugins = ["pytester", "tests.support.databases", "tests.support.redis_server", "tests.support.tiers"]

ROOT = Path(__file__).resolve().parents[1]

# Hypothesis's per-example deadline (200 ms) is a timing assertion on the machine, not the code: on a
# busy 2-core machine a handful of examples take longer. The properties are what the tests check.
settings.register_profile("colonnade", deadline=None)
settings.load_profile("colonnade")


@pytest.fixture
def repo_root() -> Path:
    return ROOT
