"""`/ui/servers` on a governed gateway with `server.admin_api`: add, restart and remove a real server.

An administrator adds the conformance reference server (Streamable HTTP) through the page; its
tools are served; restarting reconnects it; removing stops serving them. A definition that cannot
start (a stdio command that does not exist) and a name already taken are refused with the REST
codes; a consumer sees the table without the forms and is refused when it posts one.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from tests.support.governed import Governed, governed_gateway
from tests.support.machine_load import patient
from tests.support.mcp_servers import reference_http
from tests.support.page_login import csrf_token, person

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with reference_http(tmp_path_factory.mktemp("ref") / "reference.log") as url:
        yield url


@pytest.fixture(scope="module")
def governed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Governed]:
    tmp: Path = tmp_path_factory.mktemp("pages-servers")
    with governed_gateway(tmp, server={"admin_api": True}) as running:
        yield running


def post(client: httpx2.Client, path: str, **fields: str) -> httpx2.Response:
    return client.post(path, data={"csrf_token": csrf_token(client.get("/ui/servers").text), **fields})


def served(governed: Governed, server: str) -> int:
    return sum(
        1 for t in governed.running.gateway.catalog.tools() if t.canonical_name.startswith(f"acme:{server}:")
    )


def until(check: object, what: str) -> None:
    deadline = time.monotonic() + patient(30)
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_add_restart_and_remove_a_server_through_the_page(governed: Governed, reference: str) -> None:
    with person(governed, "alice") as alice:
        added = post(alice, "/ui/servers", name="ref", transport="http", url=reference, tenant="acme")
        assert added.status_code == 303 and added.headers["location"] == "/ui/servers?done=added"
        until(lambda: served(governed, "ref") > 0, "the added server's tools served")
        row = re.search(r'<tr data-server="ref">.*?</tr>', alice.get("/ui/servers").text, re.S)
        assert row is not None and 'data-state="ready"' in row.group(0)

        taken = post(alice, "/ui/servers", name="ref", transport="http", url=reference)
        assert taken.status_code == 409 and "I-REQ-SERVER-EXISTS" in taken.text
        missing = post(alice, "/ui/servers", name="ghost", transport="stdio", command="/no/such/mcp-server")
        assert missing.status_code == 400 and "I-REQ-SERVER-CONFIG" in missing.text

        restarts = next(s for s in governed.running.gateway.servers.status() if s["name"] == "ref")[
            "restarts"
        ]
        assert post(alice, "/ui/servers/ref/restart").status_code == 303
        until(
            lambda: (
                next(s for s in governed.running.gateway.servers.status() if s["name"] == "ref")["restarts"]
                > restarts
            ),
            "the server restarted",
        )
        until(lambda: 'data-state="ready"' in alice.get("/ui/servers").text, "the restarted server ready")
        assert post(alice, "/ui/servers/ref/remove").status_code == 303
    until(lambda: served(governed, "ref") == 0, "the removed server's tools no longer served")
    assert all(s["name"] != "ref" for s in governed.running.gateway.servers.status())


def test_a_consumer_sees_no_forms_and_cannot_add(governed: Governed, reference: str) -> None:
    with person(governed, "erin", "consumer") as erin:
        page = erin.get("/ui/servers")
        token = csrf_token(erin.get("/ui/catalog").text)
        refused = erin.post(
            "/ui/servers", data={"csrf_token": token, "name": "x", "transport": "http", "url": reference}
        )
    assert page.status_code == 200 and 'id="add-server"' not in page.text and 'id="read-only"' in page.text
    assert refused.status_code == 403 and "A-AUTH-ADMIN" in refused.text
    assert all(s["name"] != "x" for s in governed.running.gateway.servers.status())
