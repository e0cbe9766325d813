"""`colonnade serve`: run the gateway over Streamable HTTP or stdio.

What can be checked before the gateway opens its database is checked first (a busy port), and
what a person should know about the contracts being served (drafts, items still to review) is
said on start-up, on stderr, which stays free of the MCP protocol in stdio mode.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from colonnade.cli.common import err_console, fail, settings_of
from colonnade.cli.ports import port_problem
from colonnade.config import Settings
from colonnade.contracts.load import ContractLoadError
from colonnade.contracts.model import ContractStatus
from colonnade.contracts.validate import ContractInvalid, load_contract
from colonnade.runtime.sources import expand_contract_paths

__all__ = ["PORT_HINT", "cli", "require_free_port", "review_notices", "serve", "with_overrides"]

_SHOWN_ITEMS = 3


cli = typer.Typer()
"""What this module adds to its parent group; `colonnade.cli.root` lists it and loads it on first use."""


@cli.command()
def serve(
    ctx: typer.Context,
    host: Annotated[
        str | None, typer.Option(help="Interface to listen on (default from config: 127.0.0.1).")
    ] = None,
    port: Annotated[
        int | None, typer.Option(min=1, max=65535, help="TCP port, 1-65535 (default from config: 8765).")
    ] = None,
    stdio: Annotated[
        bool, typer.Option("--stdio", help="Serve MCP over stdin/stdout instead of HTTP.")
    ] = False,
    contract: Annotated[
        list[Path] | None,
        typer.Option("--contract", "-C", help="Contract file or folder to publish at start-up (repeatable)."),
    ] = None,
    drain_timeout: Annotated[
        float | None,
        typer.Option(
            min=0,
            help="Seconds calls in flight may finish after SIGTERM/Ctrl-C before they end retryable"
            " (default from config: 10).",
        ),
    ] = None,
) -> None:
    """Run the gateway: MCP at http(s)://HOST:PORT/mcp plus /healthz and /readyz, or MCP over stdio.

    https (and client certificates, for mTLS-bound tokens) when server.tls.cert_file is set.

    Example: colonnade serve --port 8765 -C examples/contracts
    """
    settings = with_overrides(settings_of(ctx), host, port, contract, drain_timeout)
    if not stdio:
        require_free_port(settings.server.host, settings.server.port)
    from colonnade.cli import _launch
    from colonnade.observability.logging import configure_logging

    configure_logging(settings.log_level)  # stderr only: in stdio mode stdout is the protocol
    for line in review_notices(settings.contracts):
        err_console.print(line, soft_wrap=True)
    if stdio:
        _launch.run(_launch.run_stdio(settings))
    else:
        _launch.run(_launch.run_http(settings, banner=True))


def with_overrides(
    settings: Settings,
    host: str | None,
    port: int | None,
    contracts: list[Path] | None,
    drain_timeout_s: float | None = None,
) -> Settings:
    """The settings with the command line's host, port, drain limit and extra contracts on top."""
    given = (("host", host), ("port", port), ("drain_timeout_s", drain_timeout_s))
    server = settings.server.model_copy(update={k: v for k, v in given if v is not None})
    update: dict[str, object] = {"server": server}
    if contracts:
        update["contracts"] = [*settings.contracts, *contracts]
    return settings.model_copy(update=update)


PORT_HINT = "choose another with --port, server.port in colonnade.yaml or COLONNADE_SERVER__PORT"


HOST_HINT = "choose another with --host, server.host in colonnade.yaml or COLONNADE_SERVER__HOST"


def require_free_port(host: str, port: int, hint: str = PORT_HINT) -> None:
    """End the command with one line when nothing can listen on `host:port` (the hint fits the cause)."""
    problem = port_problem(host, port)
    if problem is not None:
        fail(f"{problem}; {HOST_HINT if problem.startswith('the host ') else hint}")


def review_notices(paths: list[Path]) -> list[str]:
    """What to know about the contracts about to be served: drafts and their items still to review.

    Files that do not load are skipped here: opening the gateway reports them, with every finding.
    """
    lines: list[str] = []
    for path in expand_contract_paths(paths):
        try:
            contract = load_contract(path)
        except (ContractLoadError, ContractInvalid):
            continue
        items = contract.needs_review or []
        draft = contract.status is ContractStatus.DRAFT
        if not draft and not items:
            continue
        label = f"{contract.tenant}/{contract.name} {contract.version} ({path})"
        if draft and items:
            head = (
                f"[yellow]warning:[/yellow] {label} is a draft with {len(items)} item(s) still to review; "
                "it is served for trying out:"
            )
        elif draft:
            head = f"[yellow]note:[/yellow] {label} is a draft; it is served for trying out"
        else:
            head = f"[yellow]warning:[/yellow] {label} is published but lists {len(items)} item(s) to review:"
        lines.append(head)
        lines.extend(f"  - {item}" for item in items[:_SHOWN_ITEMS])
        if len(items) > _SHOWN_ITEMS:
            lines.append(f"  ... and {len(items) - _SHOWN_ITEMS} more under needs_review in {path}")
    return lines
