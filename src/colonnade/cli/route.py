"""`colonnade route rank`: rank benchmark tools for benchmark queries with the gateway's router.

The tools of a `tools.jsonl` become the router's corpus exactly as catalog tools do (documents
with their `server` as the API name), and each query gets the router's selection of `k` tools;
nothing is downloaded and nothing else differs from what the gateway serves.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, TextIO

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from colonnade.cli.common import err_console, fail, settings_of

__all__ = ["cli", "rank", "route_app"]

cli = typer.Typer()
"""What this module adds to its parent group; `colonnade.cli.root` lists it and loads it on first use."""

route_app = typer.Typer(help="Ask the router which tools fit (benchmarks, offline).", no_args_is_help=True)
cli.add_typer(route_app, name="route")


@route_app.command()
def rank(
    ctx: typer.Context,
    tools: Annotated[
        Path,
        typer.Option("--tools", help="Tools as JSON lines: id, name, description, input_schema, server."),
    ],
    queries: Annotated[
        Path, typer.Option("--queries", help="Queries as JSON lines: id and query (gold is ignored).")
    ],
    k: Annotated[int, typer.Option("--k", min=1, max=200, help="Tools to rank per query.")] = 10,
    out: Annotated[
        Path | None, typer.Option("--out", help="Write the rankings to this file instead of standard output.")
    ] = None,
) -> None:
    r"""Write one JSON line per query, {"id": ..., "ranked": \[tool ids, best first]}, using the
    router the gateway uses (routing settings from colonnade.yaml apply).

    Example: colonnade route rank --tools tools.jsonl --queries queries.dev.jsonl --k 10 --out ranked.jsonl
    """
    settings = settings_of(ctx)
    from colonnade.routing.benchmark import BenchmarkError, load_tools  # heavy: loaded only to rank
    from colonnade.routing.corpus import ToolCorpus
    from colonnade.routing.router import Router

    try:
        docs = load_tools(tools)
    except BenchmarkError as exc:
        fail(str(exc))
    if not docs:
        fail(f"{tools}: no tools (expected one JSON object per line with at least an 'id')")
    pending = _read_queries(queries)
    started = time.perf_counter()
    router = Router.from_settings(settings.routing, ToolCorpus.from_docs(docs))
    built_s = time.perf_counter() - started
    latencies: list[float] = []
    with _output(out) as sink, _progress() as progress:
        task = progress.add_task("ranking", total=len(pending))
        for query_id, text in pending:
            begun = time.perf_counter()
            decision = router.route(text, k=k)
            latencies.append((time.perf_counter() - begun) * 1000)
            sink.write(json.dumps({"id": query_id, "ranked": decision.selected}, ensure_ascii=False) + "\n")
            progress.advance(task)
    median = statistics.median(latencies) if latencies else 0.0
    err_console.print(
        f"ranked {len(pending)} queries over {len(docs)} tools (index built in {built_s:.2f}s; "
        f"median {median:.2f} ms/query)" + (f"; written to {out}" if out is not None else "")
    )


def _read_queries(path: Path) -> list[tuple[str, str]]:
    """(id, query) of each line; every problem names the file and line."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"cannot read queries file {path}: {exc}")
    found: list[tuple[str, str]] = []
    for line_no, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            fail(f"{path}:{line_no}: not JSON ({exc.msg})")
        if not isinstance(row, dict) or "id" not in row or not isinstance(row.get("query"), str):
            fail(f'{path}:{line_no}: expected an object with "id" and a "query" string')
        found.append((str(row["id"]), row["query"]))
    if not found:
        fail(f"{path}: no queries (expected one JSON object per line with 'id' and 'query')")
    return found


@contextmanager
def _output(out: Path | None) -> Iterator[TextIO]:
    if out is None:
        yield sys.stdout
        sys.stdout.flush()
        return
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        handle = out.open("w", encoding="utf-8")
    except OSError as exc:
        fail(f"cannot write rankings to {out}: {exc.strerror or exc}")
    with handle:
        yield handle


def _progress() -> Progress:
    return Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=err_console,
        transient=True,
    )
