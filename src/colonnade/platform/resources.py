"""ADR-012's resources under `colonnade://`: each is a read core tool with fixed or templated arguments.

Reading a resource is a call of its tool through the pipeline (authorization by the persona matrix,
audit, metrics), so a resource shows exactly what the tool would show the caller, and is listed only
to callers that may see its tool. Templates (`colonnade://apis/{api}`) name the tool's arguments.
`changed_by` says which core tools' writes change a resource, for update notifications; a change of
the served catalog (from any process) updates the resources `catalog_uris` names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from colonnade.platform.core_tool import WIRE_PREFIX

__all__ = [
    "PLATFORM_RESOURCES",
    "SCHEME",
    "PlatformResource",
    "catalog_uris",
    "changed_uris",
    "match_resource",
]

SCHEME = "colonnade://"
_FIELD = re.compile(r"\{(\w+)\}")


@dataclass(frozen=True, slots=True, eq=False)
class PlatformResource:
    uri: str
    """A URI, or a URI template with `{argument}` fields."""
    adr_name: str
    name: str
    title: str
    description: str
    tool: str
    """The core tool's operation that answers a read."""
    arguments: Mapping[str, Any] = field(default_factory=dict)
    changed_by: tuple[str, ...] = ()
    """Core tools (operations) whose successful calls change this resource."""

    @property
    def template(self) -> bool:
        return "{" in self.uri

    @property
    def fields(self) -> tuple[str, ...]:
        return tuple(_FIELD.findall(self.uri))

    @property
    def wire_tool(self) -> str:
        return f"{WIRE_PREFIX}{self.tool}"

    @property
    def canonical_tool(self) -> str:
        return f"colonnade:platform:{self.tool}"

    def match(self, uri: str) -> dict[str, str] | None:
        """The template's fields in `uri`, or None when `uri` is not one of this resource's."""
        if not self.template:
            return {} if uri == self.uri else None
        parts = _FIELD.split(self.uri)  # literal, field, literal, ...
        pattern = "".join(
            re.escape(part) if i % 2 == 0 else f"(?P<{part}>[^/]+)" for i, part in enumerate(parts)
        )
        found = re.fullmatch(pattern, uri)
        return {name: unquote(value) for name, value in found.groupdict().items()} if found else None

    def fill(self, values: Mapping[str, Any]) -> str | None:
        """The URI of one resource of this template from `values`, when they name every field."""
        if not self.template:
            return self.uri
        if not all(values.get(name) for name in self.fields):
            return None
        return _FIELD.sub(lambda m: str(values[m.group(1)]), self.uri)


_CATALOG_WRITES = ("create_api", "deploy_api", "undeploy_api", "deprecate_api")
_SUBSCRIPTION_WRITES = ("create_subscription", "update_subscription", "revoke_subscription")

PLATFORM_RESOURCES: tuple[PlatformResource, ...] = (
    PlatformResource(
        "colonnade://platform/info",
        "platform info",
        "platform-info",
        "Platform info",
        "This gateway's version, what it serves you, and who you are to it.",
        "platform_info",
    ),
    PlatformResource(
        "colonnade://platform/health",
        "health",
        "health",
        "Health",
        "Whether the gateway and its downstream servers are ready.",
        "health_check",
    ),
    PlatformResource(
        "colonnade://apis",
        "APIs",
        "apis",
        "APIs",
        "The APIs you may see.",
        "list_apis",
    ),
    PlatformResource(
        "colonnade://apis/{api}",
        "one API",
        "api",
        "One API",
        "One API (tenant:api): description, owner, versions, tools.",
        "get_api",
    ),
    PlatformResource(
        "colonnade://apis/{api}/versions",
        "API versions",
        "api-versions",
        "An API's versions",
        "Every stored version of one API.",
        "get_api_versions",
        changed_by=_CATALOG_WRITES,
    ),
    PlatformResource(
        "colonnade://subscriptions",
        "subscriptions",
        "subscriptions",
        "Subscriptions",
        "Your subscriptions (and those to the APIs you own).",
        "list_subscriptions",
        changed_by=_SUBSCRIPTION_WRITES,
    ),
    PlatformResource(
        "colonnade://subscriptions/{subscription_id}",
        "one subscription",
        "subscription",
        "One subscription",
        "One subscription you hold or decide on.",
        "get_subscription",
        changed_by=_SUBSCRIPTION_WRITES,
    ),
    PlatformResource(
        "colonnade://metrics",
        "metrics summary",
        "metrics",
        "Metrics summary",
        "Calls per tool you may see: outcomes, latency, top errors.",
        "get_metrics",
    ),
    PlatformResource(
        "colonnade://metrics/{subject}/series",
        "time series",
        "metrics-series",
        "Metrics time series",
        "A tool's (tenant:api:operation) or an API's (tenant:api) calls, errors and latency per minute "
        "over the last hour, from the stored history.",
        "metrics_time_series",
    ),
    PlatformResource(
        "colonnade://errors",
        "recent errors",
        "errors",
        "Recent errors",
        "Failed calls of the last hour, newest first.",
        "list_errors",
    ),
    PlatformResource(
        "colonnade://errors/{call_id}",
        "error snapshot",
        "error",
        "An error snapshot",
        "One failed call as it was answered: envelope, code, trace id, redacted arguments.",
        "get_error_snapshot",
    ),
    PlatformResource(
        "colonnade://alerts",
        "active alerts",
        "alerts",
        "Active alerts",
        "The gateway's firing alerts.",
        "list_alerts",
    ),
    PlatformResource(
        "colonnade://audit",
        "audit events",
        "audit",
        "Audit events",
        "The newest audit events of your tenant.",
        "list_audit_events",
        changed_by=_CATALOG_WRITES + _SUBSCRIPTION_WRITES,
    ),
    PlatformResource(
        "colonnade://security/score",
        "security score",
        "security-score",
        "Security score",
        "The gateway's security posture with reasons.",
        "security_score",
    ),
    PlatformResource(
        "colonnade://tools",
        "tools for the current user",
        "tools",
        "Your tools",
        "The tools you may call (first 200).",
        "list_tools",
        arguments={"limit": 200},
    ),
)


def match_resource(uri: str) -> tuple[PlatformResource, dict[str, Any]] | None:
    """The resource `uri` names and the arguments of its tool's call."""
    for resource in PLATFORM_RESOURCES:
        fields = resource.match(uri)
        if fields is not None:
            return resource, {**resource.arguments, **fields}
    return None


def changed_uris(tool: str, values: Iterable[Mapping[str, Any]]) -> set[str]:
    """The resources a successful call of `tool` changed; templates filled from its arguments and output."""
    merged: dict[str, Any] = {}
    for mapping in values:
        merged.update({k: v for k, v in mapping.items() if isinstance(v, str)})
    if "id" in merged and "subscription_id" not in merged:
        merged["subscription_id"] = merged["id"]
    uris = set()
    for resource in PLATFORM_RESOURCES:
        if tool in resource.changed_by:
            uri = resource.fill(merged)
            if uri is not None:
                uris.add(uri)
    return uris


def catalog_uris(apis: Iterable[str]) -> set[str]:
    """The resources a change of the served catalog touches, given the changed APIs (`tenant:api`)."""
    uris = {"colonnade://platform/info", "colonnade://apis", "colonnade://tools"}
    for api in apis:
        uris |= {f"colonnade://apis/{api}", f"colonnade://apis/{api}/versions"}
    return uris
