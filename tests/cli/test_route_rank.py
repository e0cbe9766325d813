"""`colonnade route rank`: benchmark-format tools and queries in, one ranking line per query out.

The real console script runs the main path; error paths use Typer's CliRunner in-process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from colonnade.cli import app
from colonnade.config import RoutingSettings
from colonnade.routing.benchmark import load_tools
from colonnade.routing.corpus import ToolCorpus
from colonnade.routing.router import Router

COLONNADE = Path(sys.executable).with_name("colonnade")

TOOLS = [
    ("weather", "get_forecast", "Weather forecast for a city for the next days", {"city": "City name"}),
    ("weather", "get_alerts", "Active severe weather alerts for a region", {"region": "Region code"}),
    ("weather", "get_radar", "Weather radar image of a region", {"region": "Region code"}),
    ("weather", "get_history", "Historical weather of a city", {"city": "City name"}),
    ("files", "read_file", "Read the content of a file", {"path": "File path"}),
    ("files", "write_file", "Create or overwrite a file with content", {"path": "File path"}),
    ("finance", "get_stock_price", "Current stock price of a ticker symbol", {"ticker": "Ticker"}),
    ("finance", "get_news", "Latest financial news of a company", {"ticker": "Ticker"}),
]
QUERIES = [
    ("q1", "What is the weather forecast for Paris?"),
    ("q2", "Read the file notes.txt and tell me the stock price of ACME"),
    ("q3", "weather alerts, radar and history for the region"),
]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    tools = [
        {
            "id": f"{server}/{name}",
            "name": name,
            "description": text,
            "input_schema": {
                "type": "object",
                "properties": {k: {"type": "string", "description": v} for k, v in params.items()},
            },
            "server": server,
        }
        for server, name, text, params in TOOLS
    ]
    queries = [{"id": qid, "query": text, "gold": []} for qid, text in QUERIES]
    return write_jsonl(tmp_path / "tools.jsonl", tools), write_jsonl(tmp_path / "queries.jsonl", queries)


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COLONNADE_")}
    return subprocess.run(
        [str(COLONNADE), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env={**env, "COLUMNS": "200"},
    )


def rankings(text: str) -> dict[str, list[str]]:
    rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    assert all(set(row) == {"id", "ranked"} for row in rows)
    return {row["id"]: row["ranked"] for row in rows}


def test_rank_writes_one_line_per_query_with_the_gateways_router(
    files: tuple[Path, Path], tmp_path: Path
) -> None:
    tools, queries = files
    out = tmp_path / "out" / "ranked.jsonl"
    done = run(
        "route",
        "rank",
        "--tools",
        str(tools),
        "--queries",
        str(queries),
        "--k",
        "3",
        "--out",
        str(out),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "ranked 3 queries over 8 tools" in done.stderr and "ms/query" in done.stderr
    ranked = rankings(out.read_text())
    assert list(ranked) == ["q1", "q2", "q3"]
    assert ranked["q1"][0] == "weather/get_forecast"
    assert {"files/read_file", "finance/get_stock_price"} <= set(ranked["q2"])
    router = Router.from_settings(RoutingSettings(), ToolCorpus.from_docs(load_tools(tools)))
    assert ranked == {qid: router.route(text, k=3).selected for qid, text in QUERIES}


def test_rank_prints_to_stdout_and_honours_the_routing_settings(
    files: tuple[Path, Path], tmp_path: Path
) -> None:
    tools, queries = files
    args = ("route", "rank", "--tools", str(tools), "--queries", str(queries), "--k", "2")
    plain = run(*args, cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr
    assert "files/write_file" not in rankings(plain.stdout)["q1"]
    (tmp_path / "colonnade.yaml").write_text(
        "routing:\n  bundles:\n    reports: [weather/get_forecast, files/write_file]\n"
    )
    bundled = run(*args, cwd=tmp_path)
    assert bundled.returncode == 0, bundled.stderr
    assert rankings(bundled.stdout)["q1"][:2] == ["weather/get_forecast", "files/write_file"]


runner = CliRunner()


@pytest.mark.parametrize(
    ("tools_text", "queries_text", "message"),
    [
        (None, '{"id": "q", "query": "x"}\n', "cannot read"),
        ('{"name": "no id"}\n', '{"id": "q", "query": "x"}\n', "tools.jsonl:1"),
        ('{"id": "a", "name": "a"}\n', "not json\n", "queries.jsonl:1: not JSON"),
        ('{"id": "a", "name": "a"}\n', '{"id": "q"}\n', 'expected an object with "id" and a "query" string'),
        ('{"id": "a", "name": "a"}\n', "\n", "no queries"),
        ("\n", '{"id": "q", "query": "x"}\n', "no tools"),
    ],
)
def test_bad_input_files_are_reported_with_file_and_line(
    tmp_path: Path, tools_text: str | None, queries_text: str, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    tools, queries = tmp_path / "tools.jsonl", tmp_path / "queries.jsonl"
    if tools_text is not None:
        tools.write_text(tools_text)
    queries.write_text(queries_text)
    result = runner.invoke(app, ["route", "rank", "--tools", str(tools), "--queries", str(queries)])
    assert result.exit_code == 2
    assert message in " ".join(result.output.split())


def test_k_must_be_positive(files: tuple[Path, Path]) -> None:
    tools, queries = files
    result = runner.invoke(
        app, ["route", "rank", "--tools", str(tools), "--queries", str(queries), "--k", "0"]
    )
    assert result.exit_code == 2
