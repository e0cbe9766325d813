"""Shared fixtures: paths into the repository."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["tests.support.databases", "tests.support.tiers"]

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def repo_root() -> Path:
    return ROOT
