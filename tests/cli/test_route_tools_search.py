"""`colonnade tools search` when no gateway answers (or with --local): the gateway's router over the
configured catalog, as a table or JSON. Asking a running gateway: tests/governance/test_listings.py."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from colonnade.cli import app

ROOT = Path(__file__).resolve().parents[2]
COLONNADE = Path(sys.executable).with_name("colonnade")
DEMO = ROOT / "examples" / "contracts"


def environment(tmp_path: Path, *contracts: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COLONNADE_")}
    env.update(
        COLONNADE_DATA_DIR=str(tmp_path / "data"),
        COLONNADE_CONTRACTS=json.dumps([str(c) for c in contracts]),
        COLUMNS="220",
    )
    return env


def closed_url() -> str:
    """A loopback address nothing listens on (a port just bound and let go)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


def test_with_no_gateway_answering_search_ranks_the_configured_contracts_and_says_so(tmp_path: Path) -> None:
    url = closed_url()
    done = subprocess.run(
        [str(COLONNADE), "tools", "search", "refund a paid invoice", "--k", "3", "--url", url],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=environment(tmp_path, DEMO),
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    first = next(line for line in lines if "acme__billing__refund_invoice" in line)
    assert "acme:billing:refund_invoice" in first and "retrieval 1.00" in first
    assert first.split("│")[1].strip() == "1"
    confidence = float(done.stdout.split("confidence ", 1)[1].split()[0])
    assert confidence > 0.8  # the words and the meaning agree (the dense signal is installed)
    said = " ".join(done.stdout.split())
    assert (
        f"ranked by this command, over the configured contracts and store (no gateway answers at {url};"
        in said
    )
    assert (tmp_path / "data" / "routing" / "tools_index.npz").exists()  # the embedded index was saved


runner = CliRunner()


def test_search_as_json_honours_k_and_domain_hints(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in environment(tmp_path, DEMO).items():
        if key.startswith("COLONNADE_"):
            monkeypatch.setenv(key, value)
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(
        app, ["tools", "search", "look up a customer", "--k", "2", "--json", "--domain", "billing", "--local"]
    )
    assert result.exit_code == 0, result.output
    decision = json.loads(result.output)
    assert len(decision["selected"]) == 2
    assert any("domain hint 'billing'" in " ".join(why) for why in decision["reasons"].values())
    assert decision["query_used"] == "look up a customer" and decision["fallback_used"] is False
    assert [tool["canonical_name"] for tool in decision["tools"]] == decision["selected"]
    assert decision["ranked_by"].startswith("this command") and "(--local;" in decision["ranked_by"]


def test_an_empty_catalog_or_query_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLONNADE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("COLONNADE_CONTRACTS", raising=False)
    monkeypatch.chdir(tmp_path)
    empty = runner.invoke(app, ["tools", "search", "refund", "--local"])
    assert empty.exit_code == 2
    assert "catalog is empty" in " ".join(empty.output.split())
    assert "COLONNADE_DATA_DIR" not in empty.output  # no demo ran here: no hint about one
    blank = runner.invoke(app, ["tools", "search", "   ", "--local"])
    assert blank.exit_code == 2 and "query is empty" in blank.output


def test_after_the_demo_an_empty_catalog_names_the_demos_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`make run` serves from data_dir/demo; the commands read data_dir: say where the demo's catalog is."""
    demo = tmp_path / "data" / "demo"
    demo.mkdir(parents=True)
    (demo / "colonnade.db").write_bytes(b"")
    monkeypatch.setenv("COLONNADE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("COLONNADE_CONTRACTS", raising=False)
    monkeypatch.chdir(tmp_path)
    for command in (["tools", "search", "refund", "--local"], ["tools", "describe", "get_invoice"]):
        answer = runner.invoke(app, command)
        assert answer.exit_code == 2, answer.output
        assert f"run this with COLONNADE_DATA_DIR={demo}" in "".join(answer.output.split("\n")), answer.output


def test_a_broken_contract_is_reported_not_raised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: [unclosed\n")
    for key, value in environment(tmp_path, broken).items():
        if key.startswith("COLONNADE_"):
            monkeypatch.setenv(key, value)
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["tools", "search", "refund", "--url", closed_url()])
    assert result.exit_code == 2
    assert "cannot load contract" in result.output and "broken.yaml" in result.output


def test_the_command_asks_the_route_the_gateway_serves() -> None:
    """The CLI names the path itself (asking a gateway imports no gateway code): the two must agree."""
    from colonnade.cli.tools import SEARCH_PATH
    from colonnade.surfaces.rest import tool_search

    assert SEARCH_PATH == tool_search.SEARCH_PATH
