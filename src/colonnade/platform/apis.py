"""Which APIs a caller may see, and which API an argument names: the catalog tools' own rules.

An API is visible to a caller when one of its served tools is (the authorizer's answer), so a
developer sees its team's APIs, a consumer its tenant's, an agent those its allow-list reaches,
and another tenant's API is answered like one that does not exist.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from colonnade.catalog.catalog import ApiVersion
from colonnade.catalog.tool import Tool
from colonnade.governance.authorization import permits
from colonnade.governance.principal import Principal
from colonnade.platform.refusal import PlatformRefusal
from colonnade.platform.services import PlatformServices

__all__ = ["ApiView", "api_key", "find_api", "visible_apis"]


@dataclass(frozen=True, slots=True)
class ApiView:
    tenant: str
    name: str
    versions: tuple[ApiVersion, ...]
    tools: tuple[Tool, ...]
    """The served tools of the API that the caller may see."""

    @property
    def key(self) -> str:
        return f"{self.tenant}:{self.name}"

    @property
    def active_version(self) -> str | None:
        return next((v.version for v in self.versions if v.active), None)

    @property
    def owner(self) -> str | None:
        return next((tool.owner for tool in self.tools if tool.owner), None)

    @property
    def environment(self) -> str | None:
        return next((tool.environment for tool in self.tools if tool.environment), None)


def visible_apis(services: PlatformServices, principal: Principal) -> list[ApiView]:
    """The contract APIs the caller may see, by tenant and name."""
    allowed = services.authorizer.visible(principal)
    versions: dict[tuple[str, str], list[ApiVersion]] = defaultdict(list)
    for entry in services.catalog.api_versions():
        versions[(entry.tenant, entry.api)].append(entry)
    tools: dict[tuple[str, str], list[Tool]] = defaultdict(list)
    for tool in services.catalog.tools():
        if (tool.tenant, tool.api) in versions and permits(allowed, tool.canonical_name):
            tools[(tool.tenant, tool.api)].append(tool)
    return [
        ApiView(tenant, name, tuple(versions[(tenant, name)]), tuple(tools[(tenant, name)]))
        for tenant, name in sorted(versions)
        if tools[(tenant, name)] or allowed is None
    ]


def api_key(principal: Principal, text: str) -> tuple[str, str]:
    """`tenant:api`, or a bare `api` of the caller's own tenant."""
    tenant, colon, name = text.partition(":")
    if not colon:
        if principal.tenant is None:
            raise PlatformRefusal("I-REQ-GOVERNANCE", f"give the API as tenant:api, not {text!r}")
        return principal.tenant, text
    if not tenant or not name or ":" in name:
        raise PlatformRefusal(
            "I-REQ-GOVERNANCE", f"an API is named tenant:api (e.g. acme:billing), not {text!r}"
        )
    return tenant, name


def find_api(services: PlatformServices, principal: Principal, text: str) -> ApiView:
    """The visible API `text` names; an unknown and a hidden one are refused alike."""
    tenant, name = api_key(principal, text)
    for view in visible_apis(services, principal):
        if (view.tenant, view.name) == (tenant, name):
            return view
    raise PlatformRefusal(
        "I-REQ-UNKNOWN-RESOURCE",
        f"no API {tenant}:{name} is served to you (colonnade__list_apis lists yours)",
        api=f"{tenant}:{name}",
    )
