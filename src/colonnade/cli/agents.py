"""`colonnade agents register | list | revoke`: agents, their allow-lists and keys.

An agent belongs to one tenant; its allow-list names that tenant's tools (canonical names, globs
allowed; a tool not safe for agents must be named exactly). Its tokens live at most 10 minutes
and, when it registered a public key, must be bound to that key (DPoP).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from colonnade.cli._governance import OPERATOR, run_governance
from colonnade.cli.common import console, fail, settings_of

if TYPE_CHECKING:
    from colonnade.runtime.governance import Governance
    from colonnade.store.agents_repo import AgentRecord

__all__ = ["agents_app"]

cli = typer.Typer()
"""What this module adds to its parent group; `colonnade.cli.root` lists it and loads it on first use."""

agents_app = typer.Typer(help="Register, list and revoke agents.", no_args_is_help=True)
cli.add_typer(agents_app, name="agents")


@agents_app.command("register")
def register(
    ctx: typer.Context,
    tenant: Annotated[str, typer.Option(help="Tenant the agent works for.", show_default=False)],
    allow: Annotated[
        list[str],
        typer.Option(
            "--allow", help="A canonical tool name or glob it may call (repeatable).", show_default=False
        ),
    ],
    agent_id: Annotated[str | None, typer.Option("--id", help="The agent's id (default: generated).")] = None,
    owner: Annotated[str | None, typer.Option(help="Who answers for the agent.")] = None,
    public_key: Annotated[
        Path | None, typer.Option(help="File with the agent's public JWK (its tokens are then key-bound).")
    ] = None,
) -> None:
    """Register an agent with its tenant, owner, allow-list and (optionally) public key.

    Example: colonnade agents register --id bot --tenant acme --allow 'acme:billing:*' --public-key bot.jwk
    """
    from colonnade.governance.agent_admin import AgentRequest

    jwk = None
    if public_key is not None:
        try:
            jwk = json.loads(public_key.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            fail(f"cannot read the public key {public_key}: {exc}")
    request = AgentRequest(
        allowed_tools=tuple(allow), agent_id=agent_id, tenant=tenant, owner=owner, public_key=jwk, via="cli"
    )

    async def work(governance: Governance) -> AgentRecord:
        assert governance.agent_admin is not None
        return await governance.agent_admin.register(OPERATOR, request)

    agent = run_governance(settings_of(ctx), work)
    bound = f", key {agent.key_thumbprint}" if agent.key_thumbprint else ""
    console.print(f"registered agent {agent.id} (tenant {agent.tenant}{bound})")


@agents_app.command("list")
def list_agents(ctx: typer.Context) -> None:
    """List registered agents with their allow-lists.

    Example: colonnade agents list
    """

    async def work(governance: Governance) -> list[AgentRecord]:
        assert governance.agent_admin is not None
        return await governance.agent_admin.list(OPERATOR)

    agents = run_governance(settings_of(ctx), work)
    if not agents:
        console.print("no agents registered; register one with `colonnade agents register`")
        return
    table = Table("id", "tenant", "owner", "allowed tools", "key", "via", "state")
    for agent in agents:
        table.add_row(
            agent.id,
            agent.tenant,
            agent.owner,
            "\n".join(agent.allowed_tools),
            (agent.key_thumbprint or "-")[:16],
            agent.registered_via,
            "revoked" if agent.revoked_at else "active",
        )
    console.print(table)


@agents_app.command("revoke")
def revoke(
    ctx: typer.Context,
    agent_id: Annotated[str, typer.Argument(help="Id of the agent.", show_default=False)],
) -> None:
    """Revoke an agent: its tokens are refused from now on (by other gateways within catalog_poll_s).

    Example: colonnade agents revoke invoice-bot
    """

    async def work(governance: Governance) -> AgentRecord:
        assert governance.agent_admin is not None
        return await governance.agent_admin.revoke(OPERATOR, agent_id)

    agent = run_governance(settings_of(ctx), work)
    console.print(f"revoked agent {agent.id}")
