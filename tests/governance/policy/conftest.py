"""The example contracts' tools (billing, crm), as the policy tests decide on them."""

from __future__ import annotations

import pytest
import yaml

from colonnade.catalog.catalog import Catalog
from colonnade.contracts.model import Contract
from tests.support.repo import ROOT


@pytest.fixture
def catalog() -> Catalog:
    catalog = Catalog()
    for name in ("crm", "billing"):
        document = yaml.safe_load((ROOT / "examples" / "contracts" / f"{name}.yaml").read_text())
        catalog.publish(Contract.model_validate(document))
    return catalog
