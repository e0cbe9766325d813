"""The demo backend as a real process on loopback, plus the demo contracts it serves."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest
from jsonschema import Draft202012Validator

from colonnade.contracts.load import load_document
from colonnade.contracts.model import Contract, Operation
from tests.support.machine_load import patient

ROOT = Path(__file__).resolve().parents[2]
CONTRACTS_DIR = ROOT / "examples" / "contracts"


@dataclass(frozen=True)
class DemoBackend:
    url: str
    db_path: Path
    log_path: Path

    def client(self) -> httpx2.Client:
        return httpx2.Client(base_url=self.url, timeout=10.0)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_ready(url: str, process: subprocess.Popen[bytes], log_path: Path) -> None:
    deadline = time.monotonic() + patient(30.0)  # the backend imports slowly on a busy machine
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"demo backend exited with {process.returncode}:\n{log_path.read_text()}")
        try:
            if httpx2.get(f"{url}/healthz", timeout=1.0).status_code == 200:
                return
        except httpx2.TransportError:
            time.sleep(0.05)
    raise RuntimeError(f"demo backend did not answer /healthz in time:\n{log_path.read_text()}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextmanager
def run_backend(workdir: Path, *extra: str, db_path: Path | None = None) -> Iterator[DemoBackend]:
    """Start `python -m examples.demo_backend` from the repo root, as a user would; stop it afterwards."""
    db_path = db_path or workdir / "demo.db"
    log_path = workdir / f"backend-{time.monotonic_ns()}.log"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "examples.demo_backend", "--port", str(port), "--db", str(db_path)]
    with log_path.open("wb") as log:
        process = subprocess.Popen([*command, *extra], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    try:
        _wait_ready(url, process, log_path)
        yield DemoBackend(url, db_path, log_path)
    finally:
        _stop(process)


@pytest.fixture(scope="module")
def backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoBackend]:
    """One backend per test module; tests that change data use records they create themselves."""
    with run_backend(tmp_path_factory.mktemp("demo")) as started:
        yield started


@pytest.fixture
def launch(tmp_path: Path) -> Iterator[Callable[..., str]]:
    """`launch("--reset", db_path=...)` starts another backend, returns its URL; all stop after the test."""
    with ExitStack() as stack:

        def start(*extra: str, db_path: Path | None = None) -> str:
            return stack.enter_context(run_backend(tmp_path, *extra, db_path=db_path)).url

        yield start


@pytest.fixture(scope="module")
def scratch_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx2.Client]:
    """A client of a second backend, for tests that change seeded records another test reads."""
    with run_backend(tmp_path_factory.mktemp("scratch")) as started, started.client() as http:
        yield http


@pytest.fixture(scope="module")
def client(backend: DemoBackend) -> Iterator[httpx2.Client]:
    with backend.client() as http:
        yield http


@pytest.fixture(scope="session")
def demo_contracts() -> dict[str, Contract]:
    """The demo contracts by API name, loaded the way the gateway loads them."""
    contracts = {}
    for path in sorted(CONTRACTS_DIR.glob("*.yaml")):
        contract = Contract.model_validate(load_document(path).data)
        contracts[contract.name] = contract
    return contracts


@pytest.fixture(scope="session")
def operations(demo_contracts: dict[str, Contract]) -> dict[str, Operation]:
    """Every demo operation by its operation_id (unique across the demo contracts)."""
    return {op.name: op for contract in demo_contracts.values() for op in contract.operations()}


def _output_errors(operation: Operation, body: Any) -> list[str]:
    schema = operation.endpoint.output_schema
    assert schema is not None, f"{operation} has no output_schema"
    validator = Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    return [f"/{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(body)]


Conforms = Callable[[str, Any], None]


@pytest.fixture(scope="session")
def assert_conforms(operations: dict[str, Operation]) -> Conforms:
    """`assert_conforms(operation_id, body)`: the body validates against that output_schema."""

    def check(operation_id: str, body: Any) -> None:
        errors = _output_errors(operations[operation_id], body)
        assert not errors, f"{operation_id} output breaks its output_schema: {errors}"

    return check
