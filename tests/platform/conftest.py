"""A governed gateway per test module with the platform's tools and the agent of
`tests/support/platform_personas.py`; `acme:lab` subscriptions wait for their owner's approval."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.governed import Governed, governed_gateway
from tests.support.platform_personas import register_agent


@pytest.fixture(scope="module")
def governed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Governed]:
    with governed_gateway(tmp_path_factory.mktemp("platform"), subscription_approval=["acme:lab"]) as running:
        register_agent(running)
        yield running
