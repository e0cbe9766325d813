"""Sessions are created once per backend origin and keep their connections alive."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from colonnade.adapters.http import HttpAdapter
from colonnade.adapters.outcome import OutcomeKind
from colonnade.catalog.http_binding import HttpBinding, ParamLocation, ParamSpec


def echo(base_url: str, path: str = "/echo/ping") -> HttpBinding:
    return HttpBinding(base_url=base_url, method="GET", path=path)


async def client_port(
    adapter: HttpAdapter, binding: HttpBinding, arguments: dict[str, Any] | None = None
) -> int:
    outcome = await adapter.execute(binding, arguments or {})
    assert outcome.kind is OutcomeKind.SUCCESS, outcome
    port = outcome.body["client_port"]
    assert isinstance(port, int)
    return port


async def test_sequential_calls_share_one_tcp_connection(backend_url: str) -> None:
    async with HttpAdapter() as adapter:
        ports = {await client_port(adapter, echo(backend_url, f"/echo/call/{i}")) for i in range(5)}

    assert len(ports) == 1


async def test_base_urls_of_one_origin_share_a_session_and_its_connection(backend_url: str) -> None:
    async with HttpAdapter() as adapter:
        first = await client_port(adapter, echo(backend_url + "/echo", "/crm"))
        second = await client_port(adapter, echo(backend_url + "/echo/billing/", "/invoices"))

        assert adapter.session_for(backend_url + "/echo") is adapter.session_for(backend_url + "/other")
        assert adapter.origins == (backend_url,)
    assert first == second


async def test_each_origin_gets_its_own_session(backend_url: str) -> None:
    localhost_url = backend_url.replace("127.0.0.1", "localhost")
    async with HttpAdapter() as adapter:
        await client_port(adapter, echo(backend_url))
        await client_port(adapter, echo(localhost_url))
        await client_port(adapter, echo(backend_url))

        assert len(adapter.origins) == 2
        assert adapter.session_for(backend_url) is not adapter.session_for(localhost_url)


async def test_concurrent_calls_share_the_configured_pool(backend_url: str) -> None:
    slow = HttpBinding(
        base_url=backend_url,
        method="GET",
        path="/slow",
        params=(ParamSpec("seconds", ParamLocation.QUERY, "seconds"),),
    )
    async with HttpAdapter(max_connections=2) as adapter:
        ports = await asyncio.gather(*(client_port(adapter, slow, {"seconds": 0.1}) for _ in range(6)))

    assert len(set(ports)) == 2


async def test_connections_idle_longer_than_the_keepalive_are_not_reused(backend_url: str) -> None:
    async with HttpAdapter(keepalive_s=0.1) as adapter:
        first = await client_port(adapter, echo(backend_url))
        await asyncio.sleep(0.3)
        second = await client_port(adapter, echo(backend_url))

    assert first != second


async def test_closed_adapter_refuses_new_calls(backend_url: str) -> None:
    adapter = HttpAdapter()
    session = adapter.session_for(backend_url)

    await adapter.aclose()

    assert session.closed
    assert adapter.origins == ()
    with pytest.raises(RuntimeError, match="closed"):
        await adapter.execute(echo(backend_url), {})
