"""`colonnade contract publish | list | history | deprecate` against a temporary SQLite store.

One test per command runs the real console script; the error paths use Typer's CliRunner in-process.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from colonnade.cli import app
from colonnade.contracts.model import Contract, ContractStatus
from colonnade.store import ContractStore, create_store_engine, migrate_engine
from tests.store.conftest import contract_data as store_contract_data

COLONNADE = Path(sys.executable).with_name("colonnade")


def contract_data(**overrides: Any) -> dict[str, Any]:
    """The store suite's CRM contract as a draft with its one documented endpoint."""
    base = store_contract_data(status="draft")
    return {**base, "endpoints": base["endpoints"][:1], **overrides}


def write_contract(folder: Path, filename: str, **overrides: Any) -> Path:
    path = folder / filename
    path.write_text(yaml.safe_dump(contract_data(**overrides), allow_unicode=True), encoding="utf-8")
    return path


class Workspace:
    """A temporary working folder with its own SQLite store, and ways to run the CLI against it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.data_dir = root / ".colonnade"
        self.database_url = f"sqlite+aiosqlite:///{self.data_dir / 'colonnade.db'}"
        self.env = {
            "COLONNADE_DATA_DIR": str(self.data_dir),
            "COLONNADE_DATABASE_URL": self.database_url,
            "COLUMNS": "200",
        }

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        """The real console script in a subprocess."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("COLONNADE_")} | self.env
        return subprocess.run(
            [str(COLONNADE), *args], cwd=self.root, env=env, capture_output=True, text=True, timeout=60
        )

    def seed(self, *contracts: dict[str, Any]) -> None:
        """Put contracts in the store directly, as an earlier publish would have."""

        async def main() -> None:
            engine = create_store_engine(self.database_url)
            try:
                await migrate_engine(engine)
                store = ContractStore(engine)
                for data in contracts:
                    await store.save(Contract.model_validate(data))
            finally:
                await engine.dispose()

        asyncio.run(main())

    def statuses(self) -> dict[str, ContractStatus]:
        async def main() -> dict[str, ContractStatus]:
            engine = create_store_engine(self.database_url)
            try:
                await migrate_engine(engine)
                stored = await ContractStore(engine).list()
            finally:
                await engine.dispose()
            return {f"{c.tenant}/{c.name} {c.version}": c.status for c in stored}

        return asyncio.run(main())


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    for key in [k for k in os.environ if k.startswith("COLONNADE_")]:
        monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)
    return Workspace(tmp_path)


def invoke(workspace: Workspace, *args: str) -> Any:
    """The CLI in-process (for the many error paths), with the workspace's environment."""
    return CliRunner().invoke(app, list(args), env=workspace.env)


# --- through the real console script: one test per command ---


def test_publish_several_files_through_the_console_script(workspace: Workspace) -> None:
    first = write_contract(workspace.root, "crm.yaml")
    second = write_contract(workspace.root, "crm-1.1.yaml", version="1.1.0", description="Now with notes.")
    billing = write_contract(workspace.root, "billing.yaml", name="billing", display_name="Facturation €")

    result = workspace.run("contract", "publish", "--confirm-draft", str(first), str(second), str(billing))

    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout.count("published") >= 3
    assert (workspace.data_dir / "colonnade.db").is_file()
    # The files say `status: draft`; publishing stores them as published, keeping 1.0.0 beside 1.1.0.
    assert workspace.statuses() == {
        "acme/billing 1.0.0": ContractStatus.PUBLISHED,
        "acme/crm 1.0.0": ContractStatus.PUBLISHED,
        "acme/crm 1.1.0": ContractStatus.PUBLISHED,
    }
    again = invoke(workspace, "contract", "publish", "--confirm-draft", str(first))
    assert again.exit_code == 0
    assert "unchanged (already published)" in again.stdout


def test_list_through_the_console_script(workspace: Workspace) -> None:
    workspace.seed(
        contract_data(status="published"),
        contract_data(version="1.10.0", status="published"),
        contract_data(version="1.9.0", status="draft"),
        contract_data(tenant="globex", name="billing", status="published"),
    )

    result = workspace.run("contract", "list")

    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if "acme" in line]
    assert [next(v for v in ("1.10.0", "1.9.0", "1.0.0") if v in line) for line in lines] == [
        "1.10.0",
        "1.9.0",
        "1.0.0",
    ]
    assert "globex" in result.stdout
    assert "draft" in lines[1]


def test_list_filters_by_tenant_and_status(workspace: Workspace) -> None:
    workspace.seed(
        contract_data(status="published"),
        contract_data(version="1.9.0", status="draft"),
        contract_data(tenant="globex", name="billing", status="published"),
    )

    drafts = invoke(workspace, "contract", "list", "--status", "draft")
    globex = invoke(workspace, "contract", "list", "--tenant", "globex")
    none = invoke(workspace, "contract", "list", "--tenant", "globex", "--status", "deprecated")

    assert drafts.exit_code == globex.exit_code == none.exit_code == 0
    assert "1.9.0" in drafts.stdout and "1.0.0" not in drafts.stdout
    assert "globex" in globex.stdout and "acme" not in globex.stdout
    assert "no contracts stored yet" not in drafts.stdout
    assert "no stored contract matches tenant globex and status deprecated" in none.stdout


def test_history_through_the_console_script(workspace: Workspace) -> None:
    workspace.seed(
        contract_data(version="1.0.0", status="published"),
        contract_data(version="1.1.0", status="draft"),
        contract_data(name="billing", status="published"),
    )

    result = workspace.run("contract", "history", "acme", "crm")

    assert result.returncode == 0, result.stderr
    assert "acme/crm" in result.stdout
    assert "billing" not in result.stdout
    assert result.stdout.index("1.1.0") < result.stdout.index("1.0.0")
    assert "draft" in result.stdout and "published" in result.stdout


def test_deprecate_through_the_console_script(workspace: Workspace) -> None:
    workspace.seed(
        contract_data(version="1.0.0", status="published"),
        contract_data(version="1.1.0", status="published"),
    )

    result = workspace.run("contract", "deprecate", "acme", "crm", "1.1.0")

    assert result.returncode == 0, result.stderr
    assert "deprecated acme/crm 1.1.0" in result.stdout
    assert "latest published version of acme/crm: 1.0.0" in result.stdout
    assert workspace.statuses() == {
        "acme/crm 1.0.0": ContractStatus.PUBLISHED,
        "acme/crm 1.1.0": ContractStatus.DEPRECATED,
    }


# --- error paths, in-process ---


def test_publish_refuses_invalid_contracts_and_publishes_nothing(workspace: Workspace) -> None:
    good = write_contract(workspace.root, "good.yaml")
    bad_data = contract_data(version="2.0.0")
    del bad_data["backend"]
    bad_data["endpoints"][0]["llm"]["side_effects"] = "destructive"
    bad = workspace.root / "bad.yaml"
    bad.write_text(yaml.safe_dump(bad_data), encoding="utf-8")

    result = invoke(workspace, "contract", "publish", str(good), str(bad))

    assert result.exit_code == 1
    assert "UAC001" in result.stderr and "/backend" in result.stderr
    assert "UAC003" in result.stderr
    assert "bad.yaml:" in result.stderr
    assert "nothing published" in result.stderr
    assert workspace.statuses() == {}


def test_publish_reports_unreadable_files_with_their_position(workspace: Workspace) -> None:
    broken = workspace.root / "broken.yaml"
    broken.write_text("name: crm\nendpoints: [\n", encoding="utf-8")

    result = invoke(workspace, "contract", "publish", str(broken), str(workspace.root / "missing.yaml"))

    assert result.exit_code == 2
    assert "broken.yaml:3:1" in result.stderr
    assert "missing.yaml: file not found" in result.stderr
    assert workspace.statuses() == {}


def test_publish_refuses_to_change_a_published_version(workspace: Workspace) -> None:
    workspace.seed(contract_data(status="published"))
    changed = write_contract(workspace.root, "crm.yaml", description="Different text, same version.")
    billing = write_contract(workspace.root, "billing.yaml", name="billing")

    result = invoke(workspace, "contract", "publish", "--confirm-draft", str(changed), str(billing))

    assert result.exit_code == 1
    assert "published versions are immutable" in result.stderr
    assert "1.0.1" in result.stderr
    assert "refused" in result.stdout
    assert workspace.statuses()["acme/billing 1.0.0"] is ContractStatus.PUBLISHED


def test_publish_promotes_a_stored_draft_and_reinstates_a_deprecated_version(workspace: Workspace) -> None:
    workspace.seed(contract_data(), contract_data(version="0.9.0", status="published"))
    invoke(workspace, "contract", "deprecate", "acme", "crm", "0.9.0")
    draft_file = write_contract(workspace.root, "crm.yaml")
    old_file = write_contract(workspace.root, "old.yaml", version="0.9.0")

    result = invoke(workspace, "contract", "publish", "--confirm-draft", str(draft_file), str(old_file))

    assert result.exit_code == 0, result.stderr
    assert "published (was draft)" in result.stdout
    assert "published (was deprecated)" in result.stdout
    assert set(workspace.statuses().values()) == {ContractStatus.PUBLISHED}


def test_list_on_an_empty_store_says_how_to_fill_it(workspace: Workspace) -> None:
    result = invoke(workspace, "contract", "list")
    assert result.exit_code == 0
    assert "no contracts stored yet" in result.stdout


def test_history_of_an_unknown_api_is_a_usage_error(workspace: Workspace) -> None:
    result = invoke(workspace, "contract", "history", "acme", "nothing")
    assert result.exit_code == 2
    assert "no contract acme/nothing" in result.stderr


def test_deprecate_errors_say_what_exists(workspace: Workspace) -> None:
    workspace.seed(contract_data(version="1.0.0", status="published"), contract_data(version="2.0.0"))

    unknown = invoke(workspace, "contract", "deprecate", "acme", "crm", "9.9.9")
    draft = invoke(workspace, "contract", "deprecate", "acme", "crm", "2.0.0")

    assert unknown.exit_code == 2
    assert "stored versions: 2.0.0, 1.0.0" in unknown.stderr
    assert draft.exit_code == 1
    assert "never published" in draft.stderr


def test_deprecating_the_last_published_version_says_so(workspace: Workspace) -> None:
    workspace.seed(contract_data(status="published"))
    result = invoke(workspace, "contract", "deprecate", "acme", "crm", "1.0.0")
    assert result.exit_code == 0
    assert "has no published version left" in result.stdout


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("postgresql://user:s3cret@localhost/app", "needs an async driver"),
        ("postgresql+asyncpg://user:s3cret@127.0.0.1:1/app", "cannot use the database"),
    ],
)
def test_unusable_database_is_one_clear_line(workspace: Workspace, url: str, expected: str) -> None:
    workspace.env["COLONNADE_DATABASE_URL"] = url
    result = invoke(workspace, "contract", "list")
    assert result.exit_code == 2
    assert expected in result.stderr
    assert "s3cret" not in result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit)


@pytest.mark.parametrize("command", ["publish", "list", "history", "deprecate"])
def test_every_command_has_help(workspace: Workspace, command: str) -> None:
    result = invoke(workspace, "contract", command, "--help")
    assert result.exit_code == 0
    assert "Usage" in result.stdout
    assert len(result.stdout.split("Options")[0]) > 80


# --- reports for files, pipes and tools (issue 12): never cut, and as JSON ---


LONG_TENANT = "acme-international-holdings-and-subsidiaries"
LONG_API = "customer-relationship-management-and-invoicing-platform"


def test_a_piped_table_never_cuts_a_name(workspace: Workspace) -> None:
    workspace.seed(contract_data(tenant=LONG_TENANT, name=LONG_API, status="published"))
    workspace.env.pop("COLUMNS")  # a pipe, as `colonnade contract list > list.txt` gives

    result = workspace.run("contract", "list")

    assert result.returncode == 0, result.stderr
    assert "…" not in result.stdout
    row = next(line for line in result.stdout.splitlines() if LONG_TENANT in line)
    assert LONG_API in row and "1.0.0" in row and "published" in row


def test_list_history_and_publish_print_json(workspace: Workspace) -> None:
    workspace.seed(contract_data(status="published"), contract_data(version="1.1.0", status="draft"))
    listed = workspace.run("contract", "list", "--format", "json")
    assert listed.returncode == 0, listed.stderr
    assert [(c["tenant"], c["api"], c["version"], c["status"]) for c in json.loads(listed.stdout)] == [
        ("acme", "crm", "1.1.0", "draft"),
        ("acme", "crm", "1.0.0", "published"),
    ]
    history = invoke(workspace, "contract", "history", "acme", "crm", "-f", "json")
    assert history.exit_code == 0, history.output
    assert [v["version"] for v in json.loads(history.stdout)] == ["1.1.0", "1.0.0"]
    assert len(json.loads(history.stdout)[0]["spec_hash"]) == 64
    published = invoke(
        workspace,
        "contract",
        "publish",
        "--confirm-draft",
        "--format",
        "json",
        str(write_contract(workspace.root, "x.yaml")),
    )
    assert published.exit_code == 0, published.output
    assert json.loads(published.stdout) == [
        {
            "file": str(workspace.root / "x.yaml"),
            "tenant": "acme",
            "api": "crm",
            "version": "1.0.0",
            "endpoints": 1,
            "result": "unchanged (already published)",
            "published": True,
            "compatibility": None,
            "allowed_breaking": None,
        }
    ]
