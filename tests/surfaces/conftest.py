"""The MCP surface over the real demo backend (uvicorn on loopback), with the real pipeline."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from colonnade.adapters.http import HttpAdapter
from colonnade.catalog.catalog import Catalog
from colonnade.config import ServerSettings, Settings
from colonnade.contracts.model import Contract
from colonnade.runtime.gateway import Gateway as RuntimeGateway
from colonnade.surfaces.mcp.server import McpSurface
from examples.demo_backend import create_app
from tests.support.loopback import serve_in_thread

ROOT = Path(__file__).resolve().parents[2]


def demo_contract(name: str, base_url: str, **changes: Any) -> Contract:
    data = yaml.safe_load((ROOT / "examples" / "contracts" / f"{name}.yaml").read_text())
    data["backend"]["base_url"] = base_url
    data.update(changes)
    return Contract.model_validate(data)


@pytest.fixture(scope="module")
def backend_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    app = create_app(tmp_path_factory.mktemp("backend") / "demo.db")
    with serve_in_thread(app, lifespan="on") as url:
        yield url


@dataclass
class Gateway:
    catalog: Catalog
    surface: McpSurface
    http: HttpAdapter


@pytest.fixture
async def gateway(backend_url: str) -> AsyncIterator[Gateway]:
    """The demo contracts' gateway, built from parts without a database; 4 tools per page."""
    catalog = Catalog()
    for name in ("crm", "billing"):
        catalog.publish(demo_contract(name, backend_url))
    built = RuntimeGateway(Settings(server=ServerSettings(page_size=4)), catalog=catalog)
    yield Gateway(catalog, built.mcp, built.http)
    await built.aclose()
