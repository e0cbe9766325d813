"""The example contracts' tools (billing, crm), as the policy tests decide on them."""

from __future__ import annotations

import pytest

from colonnade.catalog.catalog import Catalog
from tests.support.demo_catalog import demo_catalog


@pytest.fixture
def catalog() -> Catalog:
    return demo_catalog()
