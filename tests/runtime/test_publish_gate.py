"""The gateway's configured contracts pass the same compatibility gate as `contract publish`.

A restart with a configured file that breaks the previous version under a minor bump refuses to
start (the finding names what breaks); the same changes under a major version start, and a
version accepted once is not judged again at the next start.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from colonnade.config import Settings
from colonnade.contracts.compatibility import BREAKING_WITHOUT_MAJOR
from colonnade.contracts.validate import ContractInvalid
from colonnade.runtime.gateway import Gateway

VERSIONS = Path(__file__).parent.parent / "fixtures" / "contracts" / "versions"


def _settings(tmp_path: Path, *versions: str) -> Settings:
    return Settings(data_dir=tmp_path / "data", contracts=[VERSIONS / f"orders-{v}.yaml" for v in versions])


async def test_a_configured_breaking_minor_refuses_to_start_and_a_major_starts(tmp_path: Path) -> None:
    gateway = await Gateway.open(_settings(tmp_path, "1.1.0"))
    await gateway.aclose()

    with pytest.raises(ContractInvalid) as refused:
        await Gateway.open(_settings(tmp_path, "1.1.0", "1.2.0"))
    [finding] = refused.value.errors
    assert finding.code == BREAKING_WITHOUT_MAJOR
    assert "cancel_order" in finding.message and "list_orders" in finding.message
    assert refused.value.path is not None and refused.value.path.endswith("orders-1.2.0.yaml")

    gateway = await Gateway.open(_settings(tmp_path, "1.1.0", "2.0.0"))
    try:
        assert gateway.catalog.active_version("acme", "orders") == "2.0.0"
        assert gateway.store is not None
        assert [s.version for s in await gateway.store.history("acme", "orders")] == ["2.0.0", "1.1.0"]
    finally:
        await gateway.aclose()
    gateway = await Gateway.open(_settings(tmp_path, "1.1.0", "2.0.0"))  # accepted once: not judged again
    await gateway.aclose()
