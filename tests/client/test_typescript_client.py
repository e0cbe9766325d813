"""The TypeScript client (clients/typescript): its types match the schemas, it builds, and it calls.

Regenerating the types from src/colonnade/schemas gives the committed files byte for byte; `tsc`
builds the client and its tests; Node's test runner then reads every golden envelope and makes a
live call and a refused one against a real governed gateway.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.client_toolchains import npm_ready
from tests.support.governed import Governed, governed_gateway

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def client_dir() -> Path:
    return npm_ready()


@pytest.fixture(scope="module")
def governed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Governed]:
    with governed_gateway(tmp_path_factory.mktemp("ts-client")) as running:
        yield running


def _run(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run(
        args, cwd=cwd, capture_output=True, text=True, timeout=300, env={**os.environ, **env}
    )


def test_the_committed_types_are_what_the_schemas_generate(client_dir: Path, tmp_path: Path) -> None:
    run = _run(["node", "scripts/generate.mjs", str(tmp_path)], client_dir)
    assert run.returncode == 0, run.stderr
    for generated in sorted(tmp_path.glob("*.ts")):
        committed = client_dir / "src" / "generated" / generated.name
        assert committed.read_text() == generated.read_text(), (
            f"{committed} is stale: run `node scripts/generate.mjs` in clients/typescript"
        )
    assert {p.name for p in tmp_path.glob("*.ts")} == {
        p.name for p in (client_dir / "src" / "generated").glob("*.ts")
    }


def test_it_builds_and_calls_a_real_gateway(client_dir: Path, governed: Governed) -> None:
    build = _run(["node_modules/.bin/tsc", "-p", "."], client_dir)
    assert build.returncode == 0, build.stdout + build.stderr
    tested = _run(
        ["node", "--test", "dist/test/"],
        client_dir,
        COLONNADE_URL=governed.base_url,
        COLONNADE_TOKEN=governed.token("admin"),
    )
    assert tested.returncode == 0, tested.stdout[-3000:] + tested.stderr[-2000:]
    counts = dict(re.findall(r"^# (pass|fail|skipped) (\d+)$", tested.stdout, re.M))
    assert counts == {"pass": "3", "fail": "0", "skipped": "0"}, tested.stdout[-2000:]
