"""Root Typer app: global options (--config, --version) and the table of command groups.

The table names each command, the module that defines it and its one-line help; a command's module
is imported only when that command runs, so `colonnade --version` and `--help` load no gateway.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from colonnade._version import __version__
from colonnade.cli.flag_display import HELP_OPTION_NAMES
from colonnade.cli.lazy_group import Group, Member, lazy_group
from colonnade.cli.state import State

__all__ = ["COMMANDS", "app", "main"]

_CLI = "colonnade.cli."

COMMANDS: dict[str, Member | Group] = {
    "serve": Member(
        _CLI + "serve",
        "Run the gateway: MCP at http(s)://HOST:PORT/mcp plus /healthz and /readyz, or MCP over stdio.",
    ),
    "demo": Member(
        _CLI + "demo",
        "Run the demo: the CRM + billing demo backend and the gateway with the demo contracts published.",
    ),
    "errors": Member(
        _CLI + "errors_command",
        "List every error code a call can end with: its class, outcome status, meaning and fix hint.",
    ),
    "status": Member(
        _CLI + "servers",
        "The running gateway: its catalog, each downstream server's health and traffic, routing.",
    ),
    "smoke": Member(
        _CLI + "smoke", "Connect with a real MCP client and check every operation of the given contracts."
    ),
    "contract": Group(
        "Validate, import, export and publish API contracts (UAC).",
        {
            "validate": Member(
                _CLI + "contract_validate",
                "Check contracts against the UAC schema and rules UAC001-UAC023; report every finding.",
            ),
            "schema": Member(
                _CLI + "contract_validate",
                "Print (or write) the published JSON Schema (Draft 2020-12) of a contract document.",
            ),
            "import-openapi": Member(
                _CLI + "contract_openapi",
                "Import an OpenAPI document as a draft contract and report what needs a human.",
            ),
            "export-openapi": Member(
                _CLI + "contract_openapi",
                "Export a contract as an OpenAPI 3.1 document, with each llm block as `x-llm`.",
            ),
            "diff": Member(
                _CLI + "contract_diff",
                "Classify each change between two contract versions: breaking, additive or documentation.",
            ),
            "publish": Member(
                _CLI + "contract_store", "Validate contract files and publish them to the store."
            ),
            "lock": Member(
                _CLI + "contract_lock",
                "Write colonnade.lock: the version and definition digest of each tool a client depends on.",
            ),
            "check": Member(
                _CLI + "contract_lock",
                "Compare colonnade.lock with the store; exit 1 on drift (a tool gone, moved or deprecated).",
            ),
            "list": Member(
                _CLI + "contract_store",
                "List stored contract versions, by tenant and API, newest version first.",
            ),
            "history": Member(_CLI + "contract_store", "Show every stored version of one API, newest first."),
            "deprecate": Member(
                _CLI + "contract_store",
                "Mark a published version deprecated; it stays in the store as history.",
            ),
        },
    ),
    "agents": Member(_CLI + "agents", "Register, list and revoke agents."),
    "approvals": Member(_CLI + "approvals", "List calls awaiting approval; approve or deny them."),
    "audit": Member(_CLI + "audit", "Read and verify the audit log."),
    "cards": Member(_CLI + "cards", "Export and validate organ capability cards (organ.json + organ.toml)."),
    "keys": Member(_CLI + "keys", "Create, list, rotate and revoke API keys."),
    "organ": Member(_CLI + "organ", "Run an organ on its own (sidecar mode)."),
    "policy": Member(_CLI + "policy", "Test the Rego policies and explain their decisions."),
    "route": Member(_CLI + "route", "Ask the router which tools fit (benchmarks, offline)."),
    "secrets": Member(_CLI + "vault", "Stored secrets (sealed, per tenant) and their rotation."),
    "servers": Member(_CLI + "servers", "The downstream MCP servers of a running gateway."),
    "subscriptions": Member(_CLI + "subscriptions", "Subscriptions of consumers to APIs."),
    "token": Member(_CLI + "token", "Development tokens (the dev issuer under data_dir)."),
    "usage": Group(
        "Export what agents asked, were shown and called (routing turns and calls).",
        {
            "export": Member(
                _CLI + "usage",
                "Write routing turns and calls as JSONL (request, tools shown and called, outcome) redacted.",
            ),
        },
    ),
    "tools": Group(
        "Find and inspect the tools the gateway serves.",
        {
            "search": Member(
                _CLI + "tools",
                "Rank the catalog's tools for QUERY with the gateway's router: scores, reasons, confidence.",
            ),
            "list": Member(
                _CLI + "tools",
                "List the tools a running gateway serves to you, over its REST API (every page).",
            ),
            "describe": Member(
                _CLI + "tools_describe",
                "Show the tool NAME as the gateway serves it: names, version, side effects, schemas.",
            ),
            "schemas": Member(
                _CLI + "tools_schemas",
                "Write each tool's request and response JSON Schemas (draft 2020-12) into a folder.",
            ),
        },
    ),
}
"""Every command under `colonnade`: name -> where it is defined and the line `colonnade --help` shows."""

app = typer.Typer(
    name="colonnade",
    cls=lazy_group(COMMANDS),
    help="Colonnade: turn API contracts and MCP servers into governed, agent-ready tools.",
    no_args_is_help=True,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": HELP_OPTION_NAMES},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"colonnade {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    config: Annotated[
        Path | None,
        typer.Option("--config", "-c", envvar="COLONNADE_CONFIG", help="Path to colonnade.yaml."),
    ] = None,
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """Colonnade command line."""
    ctx.obj = State(config_path=config)


def main() -> None:
    """Console-script entry point: never lets a traceback reach the user for expected errors."""
    try:
        app()
    except KeyboardInterrupt:
        from colonnade.cli.common import err_console

        err_console.print("[yellow]interrupted[/yellow]")
        raise SystemExit(130) from None
