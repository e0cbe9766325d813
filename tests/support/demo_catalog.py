"""The example contracts' catalog for in-process tests, read from YAML once per test process.

Parsing the YAML is most of a catalog's cost (tens of milliseconds a contract, far more on a busy
machine), and stage tests build one per test; each test still gets its own `Catalog` and its own
`Contract` objects, so a test that changes them changes nobody else's.
"""

from __future__ import annotations

import copy
import functools
from typing import Any

import yaml

from colonnade.catalog.catalog import Catalog
from colonnade.contracts.model import Contract
from tests.support.repo import ROOT

__all__ = ["demo_catalog"]


@functools.cache
def _document(name: str) -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load((ROOT / "examples" / "contracts" / f"{name}.yaml").read_text())
    return document


def demo_catalog(*names: str) -> Catalog:
    """A new catalog with the named example contracts (default: crm and billing) published."""
    catalog = Catalog()
    for name in names or ("crm", "billing"):
        catalog.publish(Contract.model_validate(copy.deepcopy(_document(name))))
    return catalog
