"""The Rust envelope types (clients/rust): generated from the schemas, round-trip the goldens, call.

Regenerating `src/generated.rs` gives the committed file; `cargo test` deserialises and serialises
every golden envelope of tests/surfaces/golden (and runs the doc example); the `call` example makes
one live call of a real governed gateway over plain HTTP and reads its envelope.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.support.client_toolchains import CARGO_TARGET, RUST_CLIENT, cargo
from tests.support.governed import Governed, governed_gateway

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def cargo_bin() -> str:
    return cargo()


@pytest.fixture(scope="module")
def governed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Governed]:
    with governed_gateway(tmp_path_factory.mktemp("rust-client")) as running:
        yield running


def _cargo(cargo_bin: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [cargo_bin, *args],
        cwd=RUST_CLIENT,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "CARGO_TARGET_DIR": str(CARGO_TARGET), **env},
    )


def test_the_committed_types_are_what_the_schemas_generate(tmp_path: Path) -> None:
    out = tmp_path / "generated.rs"
    run = subprocess.run(
        [sys.executable, str(RUST_CLIENT / "generate_types.py"), str(out)], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    assert (RUST_CLIENT / "src" / "generated.rs").read_text() == out.read_text(), (
        "clients/rust/src/generated.rs is stale: run `python clients/rust/generate_types.py`"
    )


def test_cargo_test_round_trips_the_golden_envelopes(cargo_bin: str) -> None:
    run = _cargo(cargo_bin, "test", "--quiet")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert run.stdout.count("test result: ok") >= 2, run.stdout[-2000:]


def test_one_live_call(cargo_bin: str, governed: Governed) -> None:
    address = urlsplit(governed.base_url).netloc
    run = _cargo(
        cargo_bin,
        "run",
        "--quiet",
        "--example",
        "call",
        "--",
        address,
        "acme:items:read_item",
        '{"item_id": "I-1"}',
        COLONNADE_TOKEN=governed.token("admin"),
    )
    assert run.returncode == 0, run.stderr[-3000:]
    status, envelope = run.stdout.strip().splitlines()
    assert json.loads(status) == "success"
    result = json.loads(envelope)
    assert (
        result["output"] == {"id": "I-1", "value": "one"}
        and result["provenance"]["tool_id"] == "acme:items:read_item"
    )
