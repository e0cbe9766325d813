"""Logging in to the pages of a gateway over plain HTTP, as a browser would (form, cookies, redirects)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import httpx2

if TYPE_CHECKING:
    from tests.support.governed import Governed

__all__ = ["csrf_token", "form_token", "log_in", "page_client", "person"]


def page_client(base_url: str) -> httpx2.Client:
    """A client without credentials that keeps cookies and does not follow redirects."""
    return httpx2.Client(base_url=base_url, timeout=30.0, follow_redirects=False)


def form_token(body: str, name: str) -> str:
    found = re.search(rf'name="{name}" value="([^"]+)"', body)
    assert found is not None, f"no {name} field in the page"
    return found.group(1)


def csrf_token(body: str) -> str:
    return form_token(body, "csrf_token")


def log_in(client: httpx2.Client, credential: str, next_path: str = "/ui/catalog") -> httpx2.Response:
    """GET the login form, POST the credential with the form's token; the response of the POST."""
    form = client.get("/ui/login", params={"next": next_path})
    assert form.status_code == 200, form.text
    fields = {
        "credential": credential,
        "login_token": form_token(form.text, "login_token"),
        "next": next_path,
    }
    return client.post("/ui/login", data=fields)


@contextmanager
def person(governed: Governed, sub: str, persona: str = "admin", **claims: Any) -> Iterator[httpx2.Client]:
    """A page client of `governed` logged in as user `sub` with that persona (token claims as
    `Governed.token` takes them: tenant, team, scopes...)."""
    with page_client(governed.base_url) as client:
        assert log_in(client, governed.token(persona, sub=sub, **claims)).status_code == 303
        yield client
