"""`colonnade smoke`: prove, against a running gateway, that each contract is served as it says."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Literal

import typer

from colonnade.cli.common import (
    EXIT_FINDINGS,
    EXIT_OK,
    OutputFormat,
    TokenOption,
    client_token,
    console,
    fail,
    gateway_base_url,
    print_json,
    settings_of,
)
from colonnade.runtime.sources import expand_contract_paths

__all__ = ["cli", "smoke"]


cli = typer.Typer()
"""What this module adds to its parent group; `colonnade.cli.root` lists it and loads it on first use."""


@cli.command()
def smoke(
    ctx: typer.Context,
    contracts: Annotated[
        list[Path], typer.Argument(help="Contract files or folders to prove (default: examples/contracts).")
    ] = [],  # noqa: B006  (Typer needs a literal default)
    url: Annotated[
        str | None,
        typer.Option(
            help="MCP endpoint of the gateway (default: http://HOST:PORT/mcp of server.host and "
            "server.port in the config, i.e. http://127.0.0.1:8765/mcp unless changed)."
        ),
    ] = None,
    protocol: Annotated[
        str, typer.Option(help="auto (2026-07-28 when offered) or legacy (2025-11-25 handshake).")
    ] = "auto",
    junit: Annotated[
        Path | None, typer.Option(help="Also write the results as JUnit XML to this file.")
    ] = None,
    output: Annotated[
        OutputFormat,
        typer.Option(
            "--format", "-f", help="text (tables) for people; json for tools and CI.", case_sensitive=False
        ),
    ] = OutputFormat.TEXT,
    token: TokenOption = None,
) -> None:
    """Connect with a real MCP client and check every operation of the given contracts.

    Checks per operation: the contract validates; the tool is listed (canonical name in _meta);
    the description has the summary and intent; annotations match side_effects; a listed output
    schema has an object root; example inputs validate; read/none examples run, are accepted by
    the client and contain expected_output_contains; write/destructive examples are never run;
    gated tools refuse a dry-run probe with an approval demand.

    Sends COLONNADE_TOKEN (or --token, or the demo's token file) as the bearer credential.

    Example: colonnade smoke --url http://127.0.0.1:8765/mcp examples/contracts --junit smoke.xml
    """
    url = url or f"{gateway_base_url(settings_of(ctx))}/mcp"
    if protocol not in ("auto", "legacy"):
        fail(f"--protocol must be auto or legacy, not {protocol!r}")
    mode: Literal["auto", "legacy"] = "legacy" if protocol == "legacy" else "auto"
    paths = expand_contract_paths(contracts or [Path("examples/contracts")])
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        fail(f"contract file(s) not found: {', '.join(missing)}")
    if not paths:
        fail("no contract files given (pass files or a folder of .yaml/.yml/.json contracts)")
    from colonnade.smoke.runner import run_smoke

    try:
        credential = client_token(token, settings_of(ctx))
        report = asyncio.run(run_smoke(url, paths, mode=mode, token=credential))
    except Exception as exc:  # connection problems: say what and where, never a traceback
        reason = _reason(exc)
        fail(f"cannot run the smoke against {url}: {reason} (is `colonnade serve` running there?)")
    if junit is not None:
        report.write_junit(junit)
    if output is OutputFormat.JSON:
        print_json(report.to_json())
    else:
        report.render(console)
        if junit is not None:
            console.print(f"JUnit XML written to {junit}")
    raise typer.Exit(EXIT_OK if report.ok else EXIT_FINDINGS)


def _reason(exc: BaseException) -> str:
    """The innermost useful message of a (possibly grouped) exception."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
