"""A page login on one replica is valid on the others; a logout on any replica ends it on all."""

from __future__ import annotations

from pathlib import Path

from colonnade.surfaces.pages.sessions import SESSION_COOKIE
from tests.shared_state.replicas import admin_key, replica_settings, replicas
from tests.support.page_login import csrf_token, log_in, page_client


async def test_a_login_on_one_replica_is_accepted_by_another_and_a_logout_there_ends_it_here(
    tmp_path: Path, replica_database: str, redis_url: str, redis_prefix: str
) -> None:
    settings = [replica_settings(tmp_path, replica_database, redis_url, redis_prefix, n) for n in "ab"]
    with replicas(settings) as (a, b):
        credential = admin_key(a, owner="alice")
        with page_client(str(a.client.base_url)) as browser_a, page_client(str(b.client.base_url)) as other:
            logged_in = log_in(browser_a, credential)
            assert logged_in.status_code == 303, logged_in.text
            cookie = {"cookie": f"{SESSION_COOKIE}={browser_a.cookies[SESSION_COOKIE]}"}

            on_b = other.get("/ui/catalog", headers=cookie)
            assert on_b.status_code == 200, on_b.text
            assert 'id="visitor">user:alice<' in on_b.text

            out = other.post("/ui/logout", headers=cookie, data={"csrf_token": csrf_token(on_b.text)})
            assert out.status_code == 303 and out.headers["location"].startswith("/ui/login?out=1")

            on_a = browser_a.get("/ui/catalog", headers=cookie)
            assert on_a.status_code != 200 and 'id="visitor"' not in on_a.text
