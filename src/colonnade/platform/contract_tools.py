"""Contracts: validate a UAC document, import OpenAPI as a draft, export an API as OpenAPI or as the
MCP tools it is projected into. The same functions as `colonnade contract validate | import-openapi |
export-openapi`; nothing here stores anything (create_api and deploy_api do)."""

from __future__ import annotations

from typing import Any

from colonnade.contracts.openapi import export_openapi as openapi_of
from colonnade.contracts.openapi.importer import import_openapi as draft_of
from colonnade.contracts.validate import validate_data
from colonnade.governance.personas import Scope
from colonnade.governance.principal import Principal
from colonnade.platform.apis import find_api
from colonnade.platform.core_tool import CoreTool
from colonnade.platform.personas import BUILDERS, EVERYONE
from colonnade.platform.refusal import PlatformRefusal
from colonnade.platform.schemas import ANY_OBJECT, array, boolean, integer, obj, output, string
from colonnade.platform.services import PlatformServices, need

__all__ = ["CONTRACT_TOOLS"]

GROUP = "Contracts"
_FINDING = output(
    ("code", "severity", "path", "message"),
    code=string(),
    severity=string(enum=["error", "warning"]),
    path=string("JSON pointer into the document"),
    message=string(),
    fix=string(),
)


async def validate_contract(_: PlatformServices, __: Principal, args: dict[str, Any]) -> dict[str, Any]:
    findings = validate_data(args["contract"])
    errors = sum(1 for finding in findings if finding.is_error)
    return {
        "valid": errors == 0,
        "errors": errors,
        "warnings": len(findings) - errors,
        "findings": [finding.to_dict() for finding in findings],
    }


async def import_openapi(_: PlatformServices, principal: Principal, args: dict[str, Any]) -> dict[str, Any]:
    tenant = args.get("tenant") or principal.tenant
    if tenant is None:
        raise PlatformRefusal("I-REQ-GOVERNANCE", "give the tenant the draft contract belongs to")
    result = draft_of(
        args["document"], tenant=str(tenant), api=args.get("api"), base_url=args.get("base_url")
    )
    return {"contract": result.contract_data, "report": result.report()}


async def export_openapi(
    services: PlatformServices, principal: Principal, args: dict[str, Any]
) -> dict[str, Any]:
    store = need(services.contracts, "a contract store")
    view = find_api(services, principal, str(args["api"]))
    version = args.get("version") or view.active_version
    if version not in {entry.version for entry in view.versions}:
        raise PlatformRefusal(
            "C-CONTRACT-VERSION-MISMATCH",
            f"{view.key} serves no version {version!r}; colonnade__get_api_versions lists them",
        )
    stored = await store.get(view.tenant, view.name, str(version))
    return {"api": view.key, "version": stored.version, "openapi": openapi_of(stored.contract())}


async def export_mcp(
    services: PlatformServices, principal: Principal, args: dict[str, Any]
) -> dict[str, Any]:
    view = find_api(services, principal, str(args["api"]))
    tools = [tool.to_mcp().model_dump(mode="json", by_alias=True, exclude_none=True) for tool in view.tools]
    return {"api": view.key, "version": view.active_version, "tools": tools}


CONTRACT_TOOLS = (
    CoreTool(
        name="validate_contract",
        adr_name="validate contract",
        group=GROUP,
        title="Validate a contract",
        description=(
            "Every finding of the UAC validator for a contract document: code, path, message and fix."
        ),
        input_schema=obj(
            ("contract",), contract={"type": "object", "description": "the UAC contract document"}
        ),
        output_schema=output(
            ("valid", "findings"),
            valid=boolean(),
            errors=integer(),
            warnings=integer(),
            findings=array(_FINDING),
        ),
        scopes=(Scope.CATALOG_READ,),
        personas=BUILDERS,
        run=validate_contract,
    ),
    CoreTool(
        name="import_openapi",
        adr_name="import OpenAPI",
        group=GROUP,
        title="Import OpenAPI as a draft contract",
        description=(
            "Turn an OpenAPI 3.0/3.1 document into a draft UAC contract and a report of what a person "
            "must review; store it with create_api once reviewed."
        ),
        input_schema=obj(
            ("document",),
            document={"type": "object", "description": "the OpenAPI document, parsed"},
            tenant=string("the draft's tenant (default: yours)"),
            api=string("the API's name (default: from the document)"),
            base_url=string("the backend's URL (default: the document's first server)"),
        ),
        output_schema=output(("contract", "report"), contract=ANY_OBJECT, report=ANY_OBJECT),
        scopes=(Scope.CATALOG_READ,),
        personas=BUILDERS,
        run=import_openapi,
    ),
    CoreTool(
        name="export_openapi",
        adr_name="export OpenAPI",
        group=GROUP,
        title="Export an API as OpenAPI",
        description="An API you may see (its served version, or another) as an OpenAPI 3.1 document.",
        input_schema=obj(
            ("api",), api=string("tenant:api", minLength=1), version=string("default: the served one")
        ),
        output_schema=output(
            ("api", "version", "openapi"), api=string(), version=string(), openapi=ANY_OBJECT
        ),
        scopes=(Scope.CATALOG_READ,),
        personas=EVERYONE,
        run=export_openapi,
    ),
    CoreTool(
        name="export_mcp",
        adr_name="export MCP",
        group=GROUP,
        title="Export an API as MCP tools",
        description="The MCP tools an API you may see is projected into, as tools/list shows them.",
        input_schema=obj(("api",), api=string("tenant:api", minLength=1)),
        output_schema=output(
            ("api", "tools"), api=string(), version={"type": ["string", "null"]}, tools=array(ANY_OBJECT)
        ),
        scopes=(Scope.CATALOG_READ,),
        personas=EVERYONE,
        run=export_mcp,
    ),
)
