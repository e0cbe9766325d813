"""The demo backend as users and the gateway start it: the module entry point, seeding and `create_app`."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.routing import Mount

ROOT = Path(__file__).resolve().parents[2]
Launch = Callable[..., str]


def run_module(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "examples.demo_backend", *args]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=30, check=False)


def snapshot(url: str) -> dict[str, Any]:
    with httpx2.Client(base_url=url, timeout=10.0) as client:
        return {
            "customers": client.get("/customers", params={"limit": 50}).json(),
            "invoices": client.get("/invoices", params={"limit": 100}).json(),
        }


def test_help_lists_the_options() -> None:
    result = run_module("--help")
    assert result.returncode == 0
    for option in ("--host", "--port", "--db", "--reset"):
        assert option in result.stdout


def test_an_unusable_database_path_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    result = run_module("--port", "0", "--db", str(blocker / "demo.db"))
    assert result.returncode == 2
    assert f"cannot open the demo database {blocker / 'demo.db'}" in result.stderr
    assert "--db" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_port_out_of_range_is_a_usage_error() -> None:
    result = run_module("--port", "70000")
    assert result.returncode == 2
    assert "70000" in result.stderr


def test_first_start_seeds_the_same_data_every_time(launch: Launch, tmp_path: Path) -> None:
    first = snapshot(launch(db_path=tmp_path / "one.db"))
    second = snapshot(launch(db_path=tmp_path / "two.db"))
    assert first == second
    assert [c["id"] for c in first["customers"]["customers"]] == [f"C-{n}" for n in range(1001, 1006)]
    assert [i["id"] for i in first["invoices"]["invoices"]] == [f"INV-{n}" for n in range(2001, 2007)]
    assert {i["status"] for i in first["invoices"]["invoices"]} == {"open", "paid", "void"}


def test_a_restart_keeps_the_data_and_reset_restores_the_seed(launch: Launch, tmp_path: Path) -> None:
    db_path = tmp_path / "kept.db"
    url = launch(db_path=db_path)
    created = httpx2.post(f"{url}/customers", json={"name": "Kept Person", "email": "kept@example.com"})
    assert created.status_code == 201
    again = snapshot(launch(db_path=db_path))
    assert again["customers"]["total"] == 6
    assert created.json() in again["customers"]["customers"]
    reset = snapshot(launch("--reset", db_path=db_path))
    assert reset["customers"]["total"] == 5
    assert all(c["name"] != "Kept Person" for c in reset["customers"]["customers"])


@contextmanager
def serve_in_thread(app: Starlette) -> Iterator[str]:
    """uvicorn on a free loopback port in a background thread; the URL while it runs."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30.0
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture
def create_app(monkeypatch: pytest.MonkeyPatch) -> Callable[[Path], Starlette]:
    """`examples.demo_backend.create_app`, importable because `examples/` sits at the repo root."""
    monkeypatch.syspath_prepend(str(ROOT))
    from examples.demo_backend import create_app as factory

    return factory


def test_create_app_opens_and_seeds_the_database_at_start_up(
    create_app: Callable[[Path], Starlette], tmp_path: Path
) -> None:
    db_path = tmp_path / "nested" / "demo.db"
    with serve_in_thread(create_app(db_path)) as url:
        assert db_path.is_file()
        response = httpx2.get(f"{url}/customers/C-1002")
    assert response.status_code == 200
    assert response.json()["name"] == "Grace Sample"


def test_create_app_works_mounted_without_its_lifespan(
    create_app: Callable[[Path], Starlette], tmp_path: Path
) -> None:
    """A host app (e.g. the gateway's demo runner) may mount the backend; the database then opens lazily."""
    demo = create_app(tmp_path / "mounted.db")
    host = Starlette(routes=[Mount("/demo", app=demo)])
    try:
        with serve_in_thread(host) as url:
            found = httpx2.get(f"{url}/demo/invoices", params={"status": "void"})
            missing = httpx2.get(f"{url}/demo/invoices/INV-0")
    finally:
        demo.state.database.close()
    assert [i["id"] for i in found.json()["invoices"]] == ["INV-2004"]
    assert missing.status_code == 404
    assert missing.json()["error"] == "not_found"
