"""Subscriptions and access: the subscription service's rules as tools (a consumer sees and ends its
own; an API's product owner decides on its API's), and rotating an API key (shown once)."""

from __future__ import annotations

from typing import Any

from colonnade.contracts.model import SideEffects
from colonnade.governance.key_admin import key_view
from colonnade.governance.personas import Persona, Scope
from colonnade.governance.plain_data import plain_fields
from colonnade.governance.principal import Principal
from colonnade.governance.refusals import UnknownResource
from colonnade.platform.core_tool import CoreTool
from colonnade.platform.personas import SECURITY
from colonnade.platform.schemas import ANY_OBJECT, array, obj, output, string
from colonnade.platform.services import PlatformServices, need

__all__ = ["SUBSCRIPTION_TOOLS"]

GROUP = "Subscriptions and access"
_SUBSCRIBERS = frozenset({Persona.ADMIN, Persona.PRODUCT_OWNER, Persona.CONSUMER})
_DECIDERS = frozenset({Persona.ADMIN, Persona.PRODUCT_OWNER})
_STATES = ["pending", "active", "rejected", "revoked"]

_SUBSCRIPTION = output(
    ("id", "subscriber", "tenant", "api", "state"),
    id=string(),
    subscriber=string("principal key, e.g. user:bob"),
    tenant=string(),
    api=string(),
    state=string(enum=_STATES),
    created_at=string(),
    updated_at=string(),
    decided_by={"type": ["string", "null"]},
)
_ID = obj(("subscription_id",), subscription_id=string("sub_...", minLength=1))


async def list_subscriptions(
    services: PlatformServices, principal: Principal, args: dict[str, Any]
) -> dict[str, Any]:
    admin = need(services.subscriptions, "subscriptions")
    state = args.get("state")
    records = [r for r in await admin.list(principal) if state is None or r.state == state]
    return {"subscriptions": [plain_fields(record) for record in records]}


async def get_subscription(
    services: PlatformServices, principal: Principal, args: dict[str, Any]
) -> dict[str, Any]:
    admin = need(services.subscriptions, "subscriptions")
    wanted = str(args["subscription_id"])
    for record in await admin.list(principal):
        if record.id == wanted:
            return plain_fields(record)
    raise UnknownResource(f"no subscription {wanted!r} (colonnade__list_subscriptions lists yours)")


async def create_subscription(
    services: PlatformServices, principal: Principal, args: dict[str, Any]
) -> dict[str, Any]:
    admin = need(services.subscriptions, "subscriptions")
    subscriber = args.get("subscriber")
    record = await admin.request(principal, str(args["api"]), str(subscriber) if subscriber else None)
    return plain_fields(record)


async def update_subscription(
    services: PlatformServices, principal: Principal, args: dict[str, Any]
) -> dict[str, Any]:
    admin = need(services.subscriptions, "subscriptions")
    subscription_id = str(args["subscription_id"])
    if args["decision"] == "approve":
        record = await admin.approve(principal, subscription_id)
    else:
        record = await admin.reject(principal, subscription_id)
    return plain_fields(record)


async def revoke_subscription(
    services: PlatformServices, principal: Principal, args: dict[str, Any]
) -> dict[str, Any]:
    admin = need(services.subscriptions, "subscriptions")
    return plain_fields(await admin.revoke(principal, str(args["subscription_id"])))


async def rotate_api_key(
    services: PlatformServices, principal: Principal, args: dict[str, Any]
) -> dict[str, Any]:
    keys = need(services.keys, "API keys")
    issued = await keys.rotate(principal, str(args["key_id"]))
    return {"key": key_view(issued.record), "token": issued.token, "replaces": str(args["key_id"])}


SUBSCRIPTION_TOOLS = (
    CoreTool(
        name="list_subscriptions",
        adr_name="list subscriptions",
        group=GROUP,
        title="List subscriptions",
        description="Your subscriptions, and (product owners, admins) those to the APIs you own.",
        input_schema=obj(state=string(enum=_STATES)),
        output_schema=output(("subscriptions",), subscriptions=array(_SUBSCRIPTION)),
        scopes=(Scope.SUBSCRIPTIONS_READ,),
        personas=_SUBSCRIBERS,
        run=list_subscriptions,
    ),
    CoreTool(
        name="get_subscription",
        adr_name="get subscription",
        group=GROUP,
        title="Get a subscription",
        description="One subscription you hold, or one to an API you own.",
        input_schema=_ID,
        output_schema=_SUBSCRIPTION,
        scopes=(Scope.SUBSCRIPTIONS_READ,),
        personas=_SUBSCRIBERS,
        run=get_subscription,
    ),
    CoreTool(
        name="create_subscription",
        adr_name="create subscription",
        group=GROUP,
        title="Subscribe to an API",
        description=(
            "Subscribe to an API you may see (tenant:api); active at once, or pending until its product "
            "owner approves when the gateway asks for approval. Admins may subscribe someone else."
        ),
        input_schema=obj(
            ("api",),
            api=string("tenant:api", minLength=3),
            subscriber=string("admins only: the principal to subscribe, e.g. user:bob"),
        ),
        output_schema=_SUBSCRIPTION,
        scopes=(Scope.SUBSCRIPTIONS_WRITE,),
        personas=_SUBSCRIBERS,
        run=create_subscription,
        side_effects=SideEffects.WRITE,
    ),
    CoreTool(
        name="update_subscription",
        adr_name="update subscription",
        group=GROUP,
        title="Approve or reject a subscription",
        description="Decide on a pending subscription to an API you own (its product owner, or an admin).",
        input_schema=obj(
            ("subscription_id", "decision"),
            subscription_id=string("sub_...", minLength=1),
            decision=string(enum=["approve", "reject"]),
        ),
        output_schema=_SUBSCRIPTION,
        scopes=(Scope.SUBSCRIPTIONS_WRITE,),
        personas=_DECIDERS,
        run=update_subscription,
        side_effects=SideEffects.WRITE,
    ),
    CoreTool(
        name="revoke_subscription",
        adr_name="revoke subscription",
        group=GROUP,
        title="End a subscription",
        description="End a subscription: its subscriber may, and so may the API's owner. Calls stop at once.",
        input_schema=_ID,
        output_schema=_SUBSCRIPTION,
        scopes=(Scope.SUBSCRIPTIONS_WRITE,),
        personas=_SUBSCRIBERS,
        run=revoke_subscription,
        side_effects=SideEffects.WRITE,
    ),
    CoreTool(
        name="rotate_api_key",
        adr_name="rotate API key",
        group=GROUP,
        title="Rotate an API key",
        description=(
            "Replace an API key of your tenant with a new one (shown once, in token); the old key keeps "
            "working for the configured overlap."
        ),
        input_schema=obj(("key_id",), key_id=string("k_...", minLength=1)),
        output_schema=output(("key", "token"), key=ANY_OBJECT, token=string(), replaces=string()),
        scopes=(Scope.SECURITY_WRITE,),
        personas=SECURITY,
        run=rotate_api_key,
        side_effects=SideEffects.WRITE,
    ),
)
