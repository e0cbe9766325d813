"""`colonnade servers ...` and `colonnade status`: the downstream MCP servers of a running gateway.

They talk to the gateway's REST API (`/v1/servers`, `/v1/status`) at `--url` (default: the
configured `server.host` and `server.port`) with `--token` (default: the demo's token file),
because the gateway owns the servers' processes and sessions. Adding, removing and restarting need
`server.admin_api: true` on the gateway; a server added here lasts until the gateway stops
(`servers:` in colonnade.yaml is the lasting list).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import httpx2
import typer
from rich.table import Table

from colonnade.cli.common import (
    EXIT_FINDINGS,
    TokenOption,
    client_token,
    console,
    fail,
    gateway_base_url,
    settings_of,
)

if TYPE_CHECKING:
    from colonnade.config import McpServerSettings

__all__ = ["cli", "servers_app", "status"]

cli = typer.Typer()
"""What this module adds to its parent group; `colonnade.cli.root` lists it and loads it on first use."""

servers_app = typer.Typer(help="The downstream MCP servers of a running gateway.", no_args_is_help=True)
cli.add_typer(servers_app, name="servers")

UrlOption = Annotated[
    str | None, typer.Option("--url", help="The gateway (default: http://<server.host>:<server.port>).")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print the gateway's JSON answer.")]


@servers_app.command("list")
def list_servers(
    ctx: typer.Context, url: UrlOption = None, token: TokenOption = None, as_json: JsonOption = False
) -> None:
    """One line per server: state, tools, calls, errors, restarts.

    Example: colonnade servers list --url http://127.0.0.1:8765
    """
    answer = _request(ctx, url, token, "GET", "/v1/servers")
    if as_json:
        console.print_json(json.dumps(answer))
        return
    console.print(_table(answer["servers"]))
    for server in answer["servers"]:  # e.g. a `tools:` override that names no tool of the server
        for warning in server.get("warnings") or ():
            console.print(f"[yellow]warning:[/yellow] server {server['name']}: {warning}", soft_wrap=True)


@servers_app.command("status")
def server_status(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The server's name, as configured.")],
    url: UrlOption = None,
    token: TokenOption = None,
    as_json: JsonOption = False,
) -> None:
    """One server in full: its health, traffic, protocol, last error and configuration.

    Example: colonnade servers status time --json
    """
    answer = _request(ctx, url, token, "GET", f"/v1/servers/{name}")
    if as_json:
        console.print_json(json.dumps(answer))
        return
    for key, value in answer.items():
        shown = json.dumps(value) if isinstance(value, dict | list) else value
        console.print(f"[bold]{key}[/bold]: {_when(value) if key == 'since' else shown}", soft_wrap=True)


@servers_app.command("check")
def check(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Preflight, on this host: the confinement each configured stdio server would get, what cannot
    be applied here, and whether its command can start (found, executable, its `pin_command` files
    the admitted ones); exit 1 when a server would be refused or held.

    Example: colonnade servers check --json
    """
    from colonnade.adapters.sandbox.confinement import host_abilities, plan

    settings = settings_of(ctx)
    host = host_abilities()
    hidden = (settings.data_dir.resolve(),)
    report = {server.name: plan(server, hidden=hidden, host=host) for server in settings.servers}
    refused = {name: c.refusal() for name, c in report.items() if c.refusal() is not None}
    commands = {server.name: _command_check(settings.data_dir, server) for server in settings.servers}
    refused |= {name: why for name, (starts, why) in commands.items() if not starts}
    if as_json:
        answer = {
            "host": host.describe(),
            "servers": {n: c.to_json() | {"command": commands[n][1]} for n, c in report.items()},
        }
        console.print_json(json.dumps(answer | {"refused": refused}))
    else:
        console.print(f"host: {host.describe()}", soft_wrap=True, markup=False)
        for name, confinement in report.items():
            console.print(f"[bold]{name}[/bold] ({'strict' if confinement.enforce == 'strict' else 'warn'})")
            for key, value in confinement.applied.items():
                shown = ", ".join(map(str, value)) if isinstance(value, list) else value
                console.print(f"  {key}: {shown}", soft_wrap=True, markup=False)
            for gap in confinement.missing if confinement.enabled else ():
                console.print(f"  [yellow]not applied:[/yellow] {gap}", soft_wrap=True)
            console.print(f"  command: {commands[name][1]}", soft_wrap=True, markup=False)
        for reason in refused.values():
            console.print(f"[red]refused:[/red] {reason}", soft_wrap=True)
    if refused:
        raise typer.Exit(EXIT_FINDINGS)


def _command_check(data_dir: Path, server: McpServerSettings) -> tuple[bool, str]:
    """(would start, what) for a stdio server's command: found, and its pinned files admitted."""
    from colonnade.adapters.command_digest import CommandFilesMissing, command_digests
    from colonnade.adapters.stdio_command import missing_command
    from colonnade.runtime.tool_admission import ToolAdmission

    if server.transport != "stdio":
        return True, "not a stdio server"
    missing = missing_command(server)
    if missing is not None:
        return False, f"would be held misconfigured: {missing}"
    if server.pin_command is None:
        return True, "found (not pinned)"
    try:
        digests = command_digests(server)
    except CommandFilesMissing as exc:
        return False, f"would be held misconfigured: {exc}"
    starts, why = ToolAdmission(data_dir / "admission").command_standing(server, digests)
    return starts, (f"found, {why}" if starts else f"would be held unadmitted: {why}")


@servers_app.command("add")
def add(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="A new server name (the API segment of its tool names).")],
    command: Annotated[str | None, typer.Option("--command", help="stdio: the executable to start.")] = None,
    arg: Annotated[list[str] | None, typer.Option("--arg", help="stdio: an argument (repeatable).")] = None,
    http: Annotated[str | None, typer.Option("--http", help="Streamable HTTP: the server's URL.")] = None,
    tenant: Annotated[str, typer.Option("--tenant", help="The tenant its tools belong to.")] = "default",
    lazy: Annotated[bool, typer.Option("--lazy", help="Connect on the first call, not now.")] = False,
    definition: Annotated[
        str | None,
        typer.Option(
            "--definition",
            help="The whole server definition as JSON or YAML (as under servers: in colonnade.yaml).",
        ),
    ] = None,
    url: UrlOption = None,
    token: TokenOption = None,
) -> None:
    """Add a downstream server to the running gateway (needs server.admin_api on the gateway).

    Examples: colonnade servers add time --command mcp-server-time
              colonnade servers add search --http https://search.example.com/mcp --lazy
    """
    if definition is not None:
        body = _definition(definition)
    elif (command is None) == (http is None):
        fail("give exactly one of --command (stdio) and --http (Streamable HTTP), or --definition")
    elif command is not None:
        body = {"transport": "stdio", "command": command, "args": list(arg or [])}
    else:
        body = {"transport": "http", "url": http}
    body = {"name": name, "tenant": tenant, **({"start": "lazy"} if lazy else {}), **body}
    answer = _request(ctx, url, token, "POST", "/v1/servers", body)
    console.print(f"added [bold]{answer['name']}[/bold] ({answer['transport']}): {answer['state']}")


@servers_app.command("update")
def update(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The server's name (kept).")],
    definition: Annotated[
        str,
        typer.Option(
            "--definition",
            help="Its whole new definition as JSON or YAML (as under servers: in colonnade.yaml).",
            show_default=False,
        ),
    ],
    url: UrlOption = None,
    token: TokenOption = None,
) -> None:
    """Replace a server's definition on the running gateway (a fixed command, say); it starts anew.

    Lasts until the gateway stops, like `servers add`: fix colonnade.yaml too. Needs server.admin_api.

    Example: colonnade servers update time --definition '{"transport": "stdio", "command": "mcp-server-time"}'
    """
    body = {"name": name, **_definition(definition)}
    answer = _request(ctx, url, token, "PUT", f"/v1/servers/{name}", body)
    console.print(f"updated [bold]{answer['name']}[/bold] ({answer['transport']}): {answer['state']}")


@servers_app.command("remove")
def remove(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The server's name.")],
    url: UrlOption = None,
    token: TokenOption = None,
) -> None:
    """Stop a server and stop serving its tools (needs server.admin_api on the gateway).

    Example: colonnade servers remove time
    """
    _request(ctx, url, token, "DELETE", f"/v1/servers/{name}")
    console.print(f"removed [bold]{name}[/bold]")


@servers_app.command("restart")
def restart(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The server's name.")],
    url: UrlOption = None,
    token: TokenOption = None,
) -> None:
    """Reconnect to a server now: a new session (a new process for stdio), any backoff cut short.

    Example: colonnade servers restart time
    """
    _request(ctx, url, token, "POST", f"/v1/servers/{name}/restart")
    console.print(f"restarting [bold]{name}[/bold]")


@servers_app.command("pin")
def pin(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The server, as `servers list` names it.", show_default=False)],
    url: UrlOption = None,
    token: TokenOption = None,
    as_json: JsonOption = False,
) -> None:
    """The server's pinned tools (digest, who admitted them) and the tools that wait for admission.

    Exit code 1 when a tool waits (a changed or new definition, or one the poisoning checks flagged).

    Example: colonnade servers pin time --json
    """
    answer = _request(ctx, url, token, "GET", f"/v1/servers/{name}/admission")
    if as_json:
        console.print_json(json.dumps(answer))
    else:
        table = Table(
            "tool", "state", "digest", "by / findings", title=f"{name}: admission", title_justify="left"
        )
        for tool, pinned in answer["pinned"].items():
            table.add_row(tool, "pinned", pinned["digest"][:12], ", ".join(pinned["admitted_by"]))
        for parked in answer["parked"]:
            state = (
                "[red]blocked[/red]" if parked["blocked"] else f"[yellow]waits ({parked['kind']})[/yellow]"
            )
            findings = ", ".join(sorted({f["code"] for f in parked["findings"]})) or "-"
            approvals = f"{len(parked['approvals'])} of 2 approvals"
            table.add_row(parked["tool"], state, parked["digest"][:12], f"{approvals}; {findings}")
        console.print(table)
    if answer["parked"]:
        raise typer.Exit(EXIT_FINDINGS)


@servers_app.command("diff")
def diff(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The server.", show_default=False)],
    tool: Annotated[str, typer.Argument(help="A tool that waits for admission.", show_default=False)],
    url: UrlOption = None,
    token: TokenOption = None,
) -> None:
    """What changed in a parked tool: the admitted definition against the listed one, and the findings.

    Example: colonnade servers diff time get_current_time
    """
    answer = _request(ctx, url, token, "GET", f"/v1/servers/{name}/admission")
    parked = next((p for p in answer["parked"] if p["tool"] == tool), None)
    if parked is None:
        waiting = ", ".join(p["tool"] for p in answer["parked"]) or "none"
        fail(f"no tool {tool!r} of server {name} waits for admission (waiting: {waiting})")
    digests = f"{parked['admitted_digest'] or '(never admitted)'} -> {parked['digest']}"
    console.print(f"{name}:{tool} ({parked['kind']}), {digests}", soft_wrap=True)
    console.print(parked["diff"], markup=False, highlight=False, soft_wrap=True)
    for finding in parked["findings"]:
        console.print(
            f"{finding['code']} {finding['path']}: {finding['message']} (fix: {finding['fix']})",
            markup=False,
            soft_wrap=True,
        )


@servers_app.command("admit")
def admit(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The server.", show_default=False)],
    tool: Annotated[str, typer.Argument(help="The parked tool to approve.", show_default=False)],
    approver: Annotated[
        str | None,
        typer.Option(
            "--as",
            help="Who approves, on a gateway without authentication (otherwise the token's principal).",
            show_default=False,
        ),
    ] = None,
    url: UrlOption = None,
    token: TokenOption = None,
) -> None:
    """Approve a parked tool; the second approval by a different person admits (and serves) it.

    Example: colonnade servers admit time get_current_time --as alice
    """
    body = {"approver": approver} if approver is not None else {}
    answer = _request(ctx, url, token, "POST", f"/v1/servers/{name}/tools/{tool}/admit", body)
    if answer["admitted"]:
        console.print(
            f"admitted {name}:{tool} (digest {answer['digest'][:12]}), "
            f"approved by {', '.join(answer['approvals'])}"
        )
    else:
        console.print(
            f"approved {name}:{tool} ({len(answer['approvals'])} of 2): a second person must approve it"
        )


@cli.command("status")
def status(
    ctx: typer.Context, url: UrlOption = None, token: TokenOption = None, as_json: JsonOption = False
) -> None:
    """The running gateway: its catalog, each downstream server's health and traffic, routing.

    Exit code 1 when a check fails or a server is not healthy.

    Example: colonnade status --url http://127.0.0.1:8765 --json
    """
    answer = _request(ctx, url, token, "GET", "/v1/status")
    if as_json:
        console.print_json(json.dumps(answer))
    else:
        routing = answer.get("routing", {})
        console.print(
            f"Colonnade {answer['version']}: {answer['tools']} tools "
            f"(catalog version {answer['catalog_version']}); "
            f"routing {'on' if routing.get('enabled') else 'off'}, "
            f"{routing.get('tools_with_learned_co_occurrence', 0)} tools with learned co-occurrence"
        )
        for check, result in answer.get("checks", {}).items():
            console.print(
                f"  {check}: {'ok' if result.get('ok') else 'FAILING ' + str(result.get('error', ''))}"
            )
        if answer["servers"]:
            console.print(_table(answer["servers"]))
    healthy = all(s["healthy"] for s in answer["servers"]) and all(
        c.get("ok") for c in answer.get("checks", {}).values()
    )
    if not healthy:
        raise typer.Exit(EXIT_FINDINGS)


def _definition(text: str) -> dict[str, Any]:
    """The --definition as a mapping (JSON is YAML too); malformed text ends the command saying where."""
    import yaml

    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        fail(
            f"--definition is not valid JSON or YAML{where}: {getattr(exc, 'problem', None) or exc}; "
            'give a mapping, e.g. \'{"transport": "stdio", "command": "mcp-server-time"}\''
        )
    if not isinstance(value, dict):
        fail(
            f"--definition must be a mapping of settings (transport, command, url, ...), not "
            f'{type(value).__name__}; e.g. \'{{"transport": "http", "url": "https://example.com/mcp"}}\''
        )
    return {str(key): item for key, item in value.items()}


def _table(servers: list[dict[str, Any]]) -> Table:
    table = Table(title_justify="left")
    for column in ("server", "tenant", "transport", "state", "since", "tools", "calls", "errors", "restarts"):
        table.add_column(
            column, justify="right" if column in ("tools", "calls", "errors", "restarts") else "left"
        )
    table.add_column("last error", overflow="fold")
    for s in servers:
        state = s["state"] if s["healthy"] else f"[red]{s['state']}[/red]"
        table.add_row(
            s["name"],
            s["tenant"],
            s["transport"],
            state,
            _when(s["since"]),
            str(s["tools"]),
            str(s["calls"]),
            str(s["errors"]),
            str(s["restarts"]),
            s.get("last_error") or "",
        )
    return table


def _when(epoch: Any) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(epoch))) if epoch else ""


def _request(
    ctx: typer.Context, url: str | None, token: str | None, method: str, path: str, body: Any = None
) -> dict[str, Any]:
    """One REST request to the gateway with the client's credential; a refusal ends the command."""
    settings = settings_of(ctx)
    url = url or gateway_base_url(settings)
    credential = client_token(token, settings)
    headers = {"Authorization": f"Bearer {credential}"} if credential else {}
    try:
        response = httpx2.request(method, url.rstrip("/") + path, json=body, headers=headers, timeout=30)
    except httpx2.HTTPError as exc:
        fail(f"cannot reach the gateway at {url}: {exc} (is `colonnade serve` running? see --url)")
    answer = (
        response.json() if response.headers.get("content-type", "").startswith("application/json") else {}
    )
    if response.status_code >= 400:
        error = answer.get("error", {}) if isinstance(answer, dict) else {}
        message = error.get("message") or response.text[:500]
        fix = f"\n  fix: {error['fix']}" if error.get("fix") else ""
        fail(f"{error.get('code', response.status_code)}: {message}{fix}", EXIT_FINDINGS)
    return dict(answer)
