"""A governed gateway per test module (issuer, backend, gateway on loopback; SQLite store)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.governed import Governed, governed_gateway


@pytest.fixture(scope="module")
def governed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Governed]:
    with governed_gateway(tmp_path_factory.mktemp("governed")) as running:
        yield running
