"""`colonnade subscriptions request | list | approve | reject | revoke`: consumers' access to APIs.

A consumer may call an API's tools only while subscribed to it. APIs listed under
`auth.subscription_approval` start pending until their product owner (or an admin) approves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from colonnade.cli._governance import OPERATOR, run_governance
from colonnade.cli.common import console, settings_of

if TYPE_CHECKING:
    from colonnade.runtime.governance import Governance
    from colonnade.store.subscriptions_repo import SubscriptionRecord

__all__ = ["cli", "subscriptions_app"]

cli = typer.Typer()
"""What this module adds to its parent group; `colonnade.cli.root` lists it and loads it on first use."""

subscriptions_app = typer.Typer(help="Subscriptions of consumers to APIs.", no_args_is_help=True)
cli.add_typer(subscriptions_app, name="subscriptions")


@subscriptions_app.command("request")
def request(
    ctx: typer.Context,
    subscriber: Annotated[
        str, typer.Option(help="The consumer, as a principal key (e.g. user:bob).", show_default=False)
    ],
    api: Annotated[str, typer.Option(help="The API as tenant:api (e.g. acme:billing).", show_default=False)],
) -> None:
    """Subscribe a consumer to an API (pending when the API needs approval, else active).

    Example: colonnade subscriptions request --subscriber user:bob --api acme:billing
    """

    async def work(governance: Governance) -> SubscriptionRecord:
        assert governance.subscription_admin is not None
        return await governance.subscription_admin.request(OPERATOR, api, subscriber)

    _print(run_governance(settings_of(ctx), work))


@subscriptions_app.command("list")
def list_subscriptions(ctx: typer.Context) -> None:
    """List subscriptions and their states.

    Example: colonnade subscriptions list
    """

    async def work(governance: Governance) -> list[SubscriptionRecord]:
        assert governance.subscription_admin is not None
        return await governance.subscription_admin.list(OPERATOR)

    records = run_governance(settings_of(ctx), work)
    if not records:
        console.print("no subscriptions yet; request one with `colonnade subscriptions request`")
        return
    table = Table("id", "subscriber", "api", "state", "decided by", "updated (UTC)")
    for record in records:
        table.add_row(
            record.id,
            record.subscriber,
            f"{record.tenant}:{record.api}",
            record.state,
            record.decided_by or "-",
            record.updated_at.strftime("%Y-%m-%d %H:%M"),
        )
    console.print(table)


def _decision(verb: str, example: str) -> None:
    def command(
        ctx: typer.Context,
        subscription_id: Annotated[str, typer.Argument(help="Id of the subscription.", show_default=False)],
    ) -> None:
        async def work(governance: Governance) -> SubscriptionRecord:
            admin = governance.subscription_admin
            assert admin is not None
            decide = {"approve": admin.approve, "reject": admin.reject, "revoke": admin.revoke}[verb]
            return await decide(OPERATOR, subscription_id)

        _print(run_governance(settings_of(ctx), work))

    command.__doc__ = f"{verb.capitalize()} a subscription.\n\n    Example: {example}\n    "
    subscriptions_app.command(verb)(command)


_decision("approve", "colonnade subscriptions approve sub_0123456789abcdef")
_decision("reject", "colonnade subscriptions reject sub_0123456789abcdef")
_decision("revoke", "colonnade subscriptions revoke sub_0123456789abcdef")


def _print(record: SubscriptionRecord) -> None:
    console.print(f"{record.id}: {record.subscriber} -> {record.tenant}:{record.api} is {record.state}")
