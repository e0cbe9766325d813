"""Which paths the edge hands to the per-server endpoints past the router: exactly the ones their
route matches (`/servers/{name}/mcp`, a name of one segment)."""

from __future__ import annotations

import pytest

from colonnade.surfaces.mcp.proxy.endpoints import UpstreamEndpoints


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("/servers/echo/mcp", "echo"),
        ("/servers/my-server.v2/mcp", "my-server.v2"),
        ("/servers/mcp/mcp", "mcp"),
        ("/servers//mcp", None),
        ("/servers/a/b/mcp", None),
        ("/servers/echo/mcp/", None),
        ("/servers/echo", None),
        ("/mcp", None),
        ("/v1/servers/echo/mcp", None),
    ],
)
def test_the_direct_match_is_the_route_s_own(path: str, name: str | None) -> None:
    endpoints = UpstreamEndpoints(lambda name: None, lambda upstream: None)  # type: ignore[arg-type,return-value]
    matched = endpoints.direct_match(path)
    route = endpoints.routes()[0]
    assert (matched is not None) == (name is not None) == bool(route.path_regex.match(path))  # type: ignore[attr-defined]
    if matched is not None:
        assert matched.args == (name,)  # type: ignore[attr-defined]
