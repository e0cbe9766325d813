"""What the doc pages say is what the code does: the commands, options and error codes they cite exist,
and the claims a new user acts on (what happens to a destructive call) are checked by running them.

A page that names a removed option or an invented code, or says a call is refused where it is in
fact parked for approval, fails here instead of in a new user's first hour.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main
from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.calls.call_errors import UnregisteredCode, spec_for
from colonnade.calls.envelope import CallRequest, CallStatus
from colonnade.cli import app
from colonnade.config import OrganSettings, Settings
from colonnade.governance.personas import PERSONA_SCOPES, Persona
from colonnade.governance.principal import Principal, PrincipalKind
from colonnade.organs import OrganHost
from colonnade.runtime.gateway import Gateway
from examples.organs.vault import organ as vault
from tests.support.repo import ROOT

PAGES = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
CODE = re.compile(r"`([IAPRSCD]-[A-Z]+(?:-[A-Z0-9]+)+)`")
SHELL_BLOCK = re.compile(r"```(?:bash|sh|shell|console)\n(.*?)```", re.S)
COMMAND = re.compile(r"(?:^|\s)(?:[\w.~-]*/)?colonnade\s+([a-z].*)")


def _command_lines() -> Iterator[tuple[str, str]]:
    """(page, the words after `colonnade`) of every command line in a page's shell blocks."""
    for page in PAGES:
        for block in SHELL_BLOCK.findall(page.read_text(encoding="utf-8")):
            for line in block.replace("\\\n", " ").splitlines():
                found = COMMAND.search(line.split(" #")[0].strip().removeprefix("$ "))
                if found:
                    yield page.name, found.group(1)


def _problem(root: Any, line: str) -> str | None:
    """What is wrong with one documented command line, if anything."""
    try:
        words = shlex.split(line)
    except ValueError:
        words = line.split()
    command, path = root, ["colonnade"]
    while hasattr(command, "commands") and words and words[0] in command.commands:
        path.append(words[0])
        command = command.commands[words.pop(0)]
    if hasattr(command, "commands"):
        return f"`{' '.join(path)}` has no command {words[0]!r}" if words and words[0][0] != "-" else None
    options = {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)}
    unknown = [word.split("=")[0] for word in words if word.startswith("--")]
    missing = [option for option in unknown if option not in options]
    return f"`{' '.join(path)}` has no option {', '.join(missing)}" if missing else None


def test_every_documented_command_and_option_exists() -> None:
    root = typer.main.get_command(app)
    lines = list(_command_lines())
    assert len(lines) > 40, "the shell blocks of the pages were not found"
    problems = [
        f"{page}: colonnade {line}: {problem}" for page, line in lines if (problem := _problem(root, line))
    ]
    assert problems == []


def test_every_error_code_a_page_cites_is_in_the_registry() -> None:
    cited = {(page.name, code) for page in PAGES for code in CODE.findall(page.read_text(encoding="utf-8"))}
    assert len(cited) > 20
    unknown = []
    for page, code in sorted(cited):
        try:
            spec_for(code)
        except UnregisteredCode:
            unknown.append(f"{page}: {code}")
    assert unknown == []


WHEN_REFUSED = ("without a database", "dry run", "dry-run", "dry_run", "no database")


def test_pages_say_a_destructive_call_is_parked_not_refused() -> None:
    """Refusal for want of approval happens only without a database or on a dry run; a page that says
    a destructive call is refused must say in the same sentence that it is one of those cases."""
    wrong = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for sentence in re.split(r"(?<=[.|])\s", text):
            refused = "P-PRECOND-APPROVAL-REQUIRED" in sentence and "refuse" in sentence
            if refused and not any(case in sentence for case in WHEN_REFUSED):
                wrong.append(f"{page.name}: {sentence.strip()[:160]}")
    assert wrong == []


ADMIN = PERSONA_SCOPES[Persona.ADMIN]
ALICE = Principal(PrincipalKind.USER, "alice", tenant="acme", persona="admin", scopes=ADMIN)


@pytest.fixture
async def gateway(engine: AsyncEngine, tmp_path: Path) -> AsyncIterator[Gateway]:
    settings = Settings(data_dir=tmp_path, manifests_dir=None, organs=OrganSettings(tenant="acme"))
    built = Gateway(settings, engine=engine, organs=OrganHost(organs=[vault], data_dir=tmp_path / "organs"))
    try:
        yield built
    finally:
        await built.aclose()


async def test_docs_organs_a_destructive_function_is_parked_for_approval(gateway: Gateway) -> None:
    """docs/organs.md: a destructive organ function waits for approval like void_invoice."""
    store = CallRequest(tool_id="acme:vault:store", input={"key": "k", "content": "x"})
    stored = await gateway.calls.call(store, ALICE)
    assert stored.status is CallStatus.SUCCESS, stored.error
    deleted = await gateway.calls.call(CallRequest(tool_id="acme:vault:delete", input={"key": "k"}), ALICE)
    assert deleted.status is CallStatus.PENDING and deleted.pending is not None, deleted.error
    page = (ROOT / "docs" / "organs.md").read_text(encoding="utf-8")
    row = next(line for line in page.splitlines() if line.startswith("| destructive |"))
    assert "parked" in row and "pending" in row, row


def test_the_inspector_line_is_the_one_the_tests_run() -> None:
    """README and docs/cli.md give the Inspector line a user needs: the version the e2e test runs,
    the credential header, the protocol era and the Node it needs; the README's first screen still
    gives exactly two set-up commands, so the line is below it."""
    tested = re.search(r'INSPECTOR = "([^"]+)"', (ROOT / "tests/e2e/test_inspector_cli.py").read_text())
    assert tested is not None
    for page in (ROOT / "README.md", ROOT / "docs" / "cli.md"):
        text = page.read_text(encoding="utf-8")
        line = next((block for block in SHELL_BLOCK.findall(text) if "inspector" in block), None)
        assert line is not None, f"{page.name} has no Inspector command"
        assert f"npx {tested.group(1)} --cli http://127.0.0.1:8765/mcp" in line, line
        assert '--header "Authorization: Bearer $(cat .colonnade/demo-token)"' in line
        assert "--protocol-era modern" in line and "Node >= 22.19" in text
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first = readme.split("## Two commands on a fresh machine", 1)[1].split("```", 2)[1]
    commands = [line for line in first.splitlines()[1:] if line.strip() and not line.startswith("#")]
    assert [command.split()[:2] for command in commands] == [["make", "run"], ["make", "test"]]
    assert readme.index("inspector@") > readme.index("## Quickstart")


def test_a_page_that_serves_the_shipped_contracts_says_which_backend_they_call() -> None:
    """`serve -C examples/contracts` calls the contracts' base_url: the page giving that command
    says which address that is, and how to have the demo backend listen there."""
    import yaml

    urls = {
        yaml.safe_load(path.read_text(encoding="utf-8"))["backend"]["base_url"]
        for path in (ROOT / "examples" / "contracts").glob("*.yaml")
    }
    assert len(urls) == 1, urls
    (url,) = urls
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        if "serve --port 8765 -C examples/contracts" in text or "serve -C examples/contracts" in text:
            assert url in text and "python -m examples.demo_backend" in text, page.name


def test_the_architecture_page_names_every_room_and_the_layers_in_order() -> None:
    """docs/architecture.md is the project's own design page: every package under src/colonnade in
    its rooms table, the import contract's layers in their order; nothing points users at a
    design file outside the repository."""
    import tomllib

    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    source = ROOT / "src" / "colonnade"
    packages = sorted(p.name for p in source.iterdir() if p.is_dir() and not p.name.startswith("_"))
    first_cells = re.findall(r"^\| ([^|]+) \|", page, re.M)
    rooms = {name for cell in first_cells for name in re.findall(r"`([a-z_]+)`", cell)}
    assert set(packages) <= rooms, sorted(set(packages) - rooms)
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    layers = next(c for c in contracts if c["type"] == "layers")["layers"]
    shown = " > ".join(
        " | ".join(f"`{sibling.strip().removeprefix('colonnade.')}`" for sibling in layer.split("|"))
        for layer in layers
    )
    assert shown in " ".join(page.split()), shown
    assert all("docs/architecture.md" in c["name"] for c in contracts if c["type"] == "layers")
    routing_tests = sorted((ROOT / "tests" / "routing").glob("*.py"))
    for path in [ROOT / "README.md", ROOT / "pyproject.toml", *routing_tests]:
        assert "shared/DESIGN.md" not in path.read_text(encoding="utf-8"), path
        assert "shared/ beside the repository" not in path.read_text(encoding="utf-8"), path
