"""The API catalog: list, read and search the APIs a caller may see; publish, deploy, undeploy and
deprecate them through the contract store (the catalog follows the store)."""

from __future__ import annotations

import re
from typing import Any

from colonnade.contracts.model import ContractStatus, Environment, SideEffects
from colonnade.contracts.validate import parse_contract
from colonnade.governance.audit import EventKind
from colonnade.governance.personas import Scope
from colonnade.governance.principal import Principal
from colonnade.platform.api_changes import may_change, record_change
from colonnade.platform.apis import ApiView, api_key, find_api, visible_apis
from colonnade.platform.core_tool import CoreTool
from colonnade.platform.discovery import tool_card
from colonnade.platform.personas import BUILDERS, EVERYONE, OWNERS
from colonnade.platform.refusal import PlatformRefusal
from colonnade.platform.schemas import ANY_OBJECT, array, integer, obj, output, string
from colonnade.platform.services import PlatformServices, need
from colonnade.store.records import StoredContract

__all__ = ["CATALOG_TOOLS"]

GROUP = "API catalog"
_WORD = re.compile(r"[a-z0-9]+")

_API = output(
    ("api", "tenant", "name", "versions"),
    api=string("tenant:name"),
    tenant=string(),
    name=string(),
    active_version={"type": ["string", "null"]},
    owner={"type": ["string", "null"]},
    environment={"type": ["string", "null"]},
    tools=integer("served tools you may see"),
    versions=array(string()),
)
_VERSION = output(
    ("version", "status"),
    version=string(),
    status=string(enum=[status.value for status in ContractStatus]),
    served={"type": "boolean"},
)
_API_ARG = string("tenant:api (a bare api means your tenant's)", minLength=1)
_VERSION_ARG = string("a version, e.g. 1.2.0", minLength=1)


def _summary(view: ApiView) -> dict[str, Any]:
    return {
        "api": view.key,
        "tenant": view.tenant,
        "name": view.name,
        "active_version": view.active_version,
        "owner": view.owner,
        "environment": view.environment,
        "tools": len(view.tools),
        "versions": [entry.version for entry in view.versions],
    }


async def list_apis(services: PlatformServices, principal: Principal, args: dict[str, Any]) -> dict[str, Any]:
    tenant = args.get("tenant")
    views = [view for view in visible_apis(services, principal) if tenant is None or view.tenant == tenant]
    return {"apis": [_summary(view) for view in views]}


async def get_api(services: PlatformServices, principal: Principal, args: dict[str, Any]) -> dict[str, Any]:
    view = find_api(services, principal, str(args["api"]))
    described: dict[str, Any] = {"display_name": None, "description": None}
    if services.contracts is not None and view.active_version is not None:
        stored = await services.contracts.get(view.tenant, view.name, view.active_version)
        described = {
            "display_name": stored.document.get("display_name"),
            "description": stored.document.get("description"),
        }
    return {**_summary(view), **described, "tool_list": [tool_card(tool) for tool in view.tools]}


async def search_apis(
    services: PlatformServices, principal: Principal, args: dict[str, Any]
) -> dict[str, Any]:
    words = set(_WORD.findall(str(args["query"]).lower()))
    scored = []
    for view in visible_apis(services, principal):
        text = " ".join(
            [view.key, *(f"{tool.title} {tool.summary} {' '.join(tool.tags)}" for tool in view.tools)]
        )
        hits = words & set(_WORD.findall(text.lower()))
        if hits:
            scored.append((len(hits) / len(words), view))
    scored.sort(key=lambda pair: (-pair[0], pair[1].key))
    limit = int(args.get("limit", 10))
    return {"apis": [{**_summary(view), "score": round(score, 3)} for score, view in scored[:limit]]}


async def get_api_versions(
    services: PlatformServices, principal: Principal, args: dict[str, Any]
) -> dict[str, Any]:
    view = find_api(services, principal, str(args["api"]))
    served = {entry.version for entry in view.versions if entry.active}
    if services.contracts is not None:
        history = await services.contracts.history(view.tenant, view.name)
        versions = [_version(stored, stored.version in served) for stored in history]
    else:
        versions = [
            {
                "version": e.version,
                "status": "deprecated" if e.deprecated else "published",
                "served": e.active,
            }
            for e in reversed(view.versions)
        ]
    return {"api": view.key, "active_version": view.active_version, "versions": versions}


def _version(stored: StoredContract, served: bool) -> dict[str, Any]:
    document = stored.document
    return {
        "version": stored.version,
        "status": stored.status.value,
        "served": served,
        "environment": document.get("environment"),
        "updated_at": stored.updated_at.isoformat(),
    }


async def create_api(
    services: PlatformServices, principal: Principal, args: dict[str, Any]
) -> dict[str, Any]:
    store = need(services.contracts, "a contract store")
    contract = parse_contract(args["contract"])
    may_change(principal, contract, exists=False)
    stored = await store.save(contract)
    await record_change(services, principal, EventKind.CONTRACT_PUBLISH, stored)
    return _changed(services, stored)


async def deploy_api(
    services: PlatformServices, principal: Principal, args: dict[str, Any]
) -> dict[str, Any]:
    store = need(services.contracts, "a contract store")
    tenant, name = api_key(principal, str(args["api"]))
    stored = await store.get(tenant, name, str(args["version"]))
    contract = stored.contract()
    may_change(principal, contract, exists=True)
    wanted = Environment(str(args["environment"]))
    declared = contract.environment or Environment.PROD
    if declared is not wanted:
        raise PlatformRefusal(
            "I-REQ-GOVERNANCE",
            f"{stored.label} is declared for {declared.value}, not {wanted.value}: publish a version whose "
            f"contract says environment: {wanted.value} (a version's contract is immutable)",
        )
    deployed = await store.publish(tenant, name, stored.version)
    await record_change(services, principal, EventKind.CONTRACT_PUBLISH, deployed, environment=wanted.value)
    return _changed(services, deployed)


async def undeploy_api(
    services: PlatformServices, principal: Principal, args: dict[str, Any]
) -> dict[str, Any]:
    store = need(services.contracts, "a contract store")
    tenant, name = api_key(principal, str(args["api"]))
    latest = await store.get(tenant, name)
    may_change(principal, latest.contract(), exists=True)
    withdrawn = []
    for stored in await store.history(tenant, name):
        if stored.status is ContractStatus.PUBLISHED:
            done = await store.deprecate(tenant, name, stored.version)
            await record_change(services, principal, EventKind.CONTRACT_DEPRECATE, done, undeployed=True)
            withdrawn.append(done.version)
    return {"api": f"{tenant}:{name}", "withdrawn": withdrawn, "served": False}


async def deprecate_api(
    services: PlatformServices, principal: Principal, args: dict[str, Any]
) -> dict[str, Any]:
    store = need(services.contracts, "a contract store")
    tenant, name = api_key(principal, str(args["api"]))
    stored = await store.get(tenant, name, str(args["version"]))
    may_change(principal, stored.contract(), exists=True)
    done = await store.deprecate(tenant, name, stored.version)
    await record_change(services, principal, EventKind.CONTRACT_DEPRECATE, done)
    return _changed(services, done)


def _changed(services: PlatformServices, stored: StoredContract) -> dict[str, Any]:
    served = services.catalog.active_version(stored.tenant, stored.name)
    return {
        "api": f"{stored.tenant}:{stored.name}",
        "version": stored.version,
        "status": stored.status.value,
        "served_version": served,
    }


_CHANGED = output(
    ("api", "version", "status"),
    api=string(),
    version=string(),
    status=string(enum=[status.value for status in ContractStatus]),
    served_version={"type": ["string", "null"]},
)

CATALOG_TOOLS = (
    CoreTool(
        name="list_apis",
        adr_name="list APIs",
        group=GROUP,
        title="List APIs",
        description="The APIs you may see, with their versions, owner, environment and served tool count.",
        input_schema=obj(tenant=string("only this tenant's APIs")),
        output_schema=output(("apis",), apis=array(_API)),
        scopes=(Scope.CATALOG_READ,),
        personas=EVERYONE,
        run=list_apis,
    ),
    CoreTool(
        name="get_api",
        adr_name="get API",
        group=GROUP,
        title="Get an API",
        description="One API you may see: its description, owner, environment, versions and tools.",
        input_schema=obj(("api",), api=_API_ARG),
        output_schema=output(("api", "tool_list"), api=string(), tool_list=array(ANY_OBJECT)),
        scopes=(Scope.CATALOG_READ,),
        personas=EVERYONE,
        run=get_api,
    ),
    CoreTool(
        name="search_apis",
        adr_name="search APIs",
        group=GROUP,
        title="Search APIs",
        description=(
            "APIs you may see whose names, tool titles, summaries or tags share words with the query."
        ),
        input_schema=obj(
            ("query",),
            query=string("what the API is for, in plain words", minLength=1),
            limit=integer("how many APIs", minimum=1, maximum=100, default=10),
        ),
        output_schema=output(("apis",), apis=array(_API)),
        scopes=(Scope.CATALOG_READ,),
        personas=EVERYONE,
        run=search_apis,
    ),
    CoreTool(
        name="get_api_versions",
        adr_name="get API versions",
        group=GROUP,
        title="Get an API's versions",
        description="Every stored version of an API you may see, newest first: status, environment, served.",
        input_schema=obj(("api",), api=_API_ARG),
        output_schema=output(("api", "versions"), api=string(), versions=array(_VERSION)),
        scopes=(Scope.CATALOG_READ,),
        personas=EVERYONE,
        run=get_api_versions,
    ),
    CoreTool(
        name="create_api",
        adr_name="create API",
        group=GROUP,
        title="Create (publish) an API",
        description=(
            "Validate a UAC contract and store it: status published serves it at once, draft stores it "
            "for deploy_api. A published version is immutable: change it with a new version."
        ),
        input_schema=obj(
            ("contract",), contract={"type": "object", "description": "the UAC contract document"}
        ),
        output_schema=_CHANGED,
        scopes=(Scope.CATALOG_WRITE,),
        personas=BUILDERS,
        run=create_api,
        side_effects=SideEffects.WRITE,
    ),
    CoreTool(
        name="deploy_api",
        adr_name="deploy API",
        group=GROUP,
        title="Deploy an API version",
        description=(
            "Serve a stored version (a draft, or a deprecated one again) in the environment its contract "
            "declares (dev, staging or prod); developers deploy to dev and staging only."
        ),
        input_schema=obj(
            ("api", "version", "environment"),
            api=_API_ARG,
            version=_VERSION_ARG,
            environment=string(enum=[environment.value for environment in Environment]),
        ),
        output_schema=_CHANGED,
        scopes=(Scope.CATALOG_WRITE,),
        personas=BUILDERS,
        run=deploy_api,
        side_effects=SideEffects.WRITE,
    ),
    CoreTool(
        name="undeploy_api",
        adr_name="undeploy API",
        group=GROUP,
        title="Undeploy an API",
        description=(
            "Stop serving every version of an API (each becomes deprecated, kept as history). Its callers "
            "lose it, so the call waits for a human's approval."
        ),
        input_schema=obj(("api",), api=_API_ARG),
        output_schema=output(("api", "withdrawn"), api=string(), withdrawn=array(string())),
        scopes=(Scope.CATALOG_WRITE,),
        personas=OWNERS,
        run=undeploy_api,
        side_effects=SideEffects.DESTRUCTIVE,
    ),
    CoreTool(
        name="deprecate_api",
        adr_name="deprecate API",
        group=GROUP,
        title="Deprecate an API version",
        description="Mark a published version deprecated: it is no longer served and stays as history.",
        input_schema=obj(("api", "version"), api=_API_ARG, version=_VERSION_ARG),
        output_schema=_CHANGED,
        scopes=(Scope.CATALOG_WRITE,),
        personas=OWNERS,
        run=deprecate_api,
        side_effects=SideEffects.WRITE,
    ),
)
