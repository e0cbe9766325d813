"""An upstream call through the whole gateway sends the stored secret of the contract's tenant: the
real loopback backend sees it; another tenant's backend naming the same secret gets nothing (the
call fails before reaching it, saying how to store one); a rotation made with the CLI while the
gateway runs is what the next call sends."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from starlette.types import ASGIApp, Receive, Scope, Send
from typer.testing import CliRunner

from colonnade.cli import app as cli_app
from colonnade.config import VaultSettings
from tests.support.fault_backend import FaultBackend, create_app
from tests.support.loopback import serve_in_thread
from tests.support.tenant_contracts import tenant_contract
from tests.surfaces.rest_harness import RunningGateway, gateway_settings, serve_gateway

ACME_FIRST = "acme-token-5b8e2c71d4"
ACME_SECOND = "acme-token-rotated-93af0e"
REFERENCE = {"provider": "store", "name": "crm-token"}


class _Authorizations:
    """Records the Authorization header of every request the backend receives."""

    def __init__(self, app: ASGIApp, seen: list[tuple[str, str | None]]) -> None:
        self.app, self.seen = app, seen

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] != "/healthz":
            headers = dict(scope["headers"])
            value = headers.get(b"authorization")
            self.seen.append((scope["path"], value.decode() if value is not None else None))
        await self.app(scope, receive, send)


def _contract(folder: Path, tenant: str, backend_url: str) -> Path:
    document: dict[str, Any] = tenant_contract(tenant, "items", backend_url).model_dump(
        mode="json", exclude_none=True
    )
    document["backend"]["auth"] = {"type": "bearer", "secret": REFERENCE}
    path = folder / f"{tenant}-items.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return path


def _secrets(data_dir: Path, *args: str, value: str) -> str:
    result = CliRunner().invoke(
        cli_app, ["secrets", *args], input=value, env={"COLONNADE_DATA_DIR": str(data_dir), "COLUMNS": "200"}
    )
    assert result.exit_code == 0, result.output
    assert value not in result.output
    return result.output


@pytest.fixture
def seen() -> list[tuple[str, str | None]]:
    return []


@pytest.fixture
def running(tmp_path: Path, seen: list[tuple[str, str | None]]) -> Iterator[RunningGateway]:
    data_dir = tmp_path / "data"
    _secrets(data_dir, "set", "crm-token", "--tenant", "acme", value=ACME_FIRST)
    with serve_in_thread(_Authorizations(create_app(FaultBackend()), seen)) as backend_url:
        contracts = [_contract(tmp_path, tenant, backend_url) for tenant in ("acme", "globex")]
        settings = gateway_settings(data_dir, contracts, vault=VaultSettings(cache_s=0))
        with serve_gateway(settings) as gateway:
            yield gateway


def _call(running: RunningGateway, tool: str) -> dict[str, Any]:
    response = running.client.post("/v1/calls", json={"tool_id": tool, "input": {"item_id": "I-1"}})
    assert response.status_code < 500, response.text
    body: dict[str, Any] = response.json()
    return body


def test_the_backend_receives_the_stored_secret_of_its_tenant_and_the_rotated_one_next(
    running: RunningGateway, seen: list[tuple[str, str | None]], tmp_path: Path
) -> None:
    result = _call(running, "acme:items:read_item")
    assert result["status"] == "success", result
    assert seen == [("/items/I-1", f"Bearer {ACME_FIRST}")]

    _secrets(
        tmp_path / "data", "rotate", "crm-token", "--tenant", "acme", "--overlap-s", "60", value=ACME_SECOND
    )
    result = _call(running, "acme:items:read_item")
    assert result["status"] == "success", result
    assert seen[-1] == ("/items/I-1", f"Bearer {ACME_SECOND}")


def test_another_tenants_backend_never_gets_the_secret(
    running: RunningGateway, seen: list[tuple[str, str | None]]
) -> None:
    result = _call(running, "globex:items:read_item")
    assert result["status"] == "terminal_error", result
    assert "crm-token" in result["error"]["message"]
    assert "colonnade secrets set crm-token --tenant globex" in result["error"]["message"]
    assert seen == []  # refused before the backend was reached
