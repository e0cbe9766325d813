"""Tool manifests: the runtime facts the pipeline enforces (limits, retries, circuit, network, health, SLO).

Contract tools derive theirs from the contract (determinism from side effects and method, limits
from `runtime`, the network allow-list from the backend URL); organ functions from their cards
(the queue cap is `runtime.concurrency_max`, the p95 latency and error rate are the SLO); a
`tools/<tool_id>/tool.yaml` file may override any part of it. Manifests are computed once per
tool definition (by digest).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from colonnade.catalog.bindings import McpBinding, OrganBinding
from colonnade.catalog.http_binding import HttpBinding
from colonnade.catalog.naming import to_wire
from colonnade.catalog.tool import Tool
from colonnade.contracts.model import BackendAuth, Determinism
from colonnade.errors import ColonnadeError

__all__ = [
    "DEFAULT_TIMEOUT_MS",
    "Capabilities",
    "Circuit",
    "Health",
    "Limits",
    "ManifestError",
    "ManifestOverride",
    "Manifests",
    "RetryLimits",
    "Slo",
    "ToolManifest",
    "ToolRate",
    "derive_manifest",
    "host_port",
]

DEFAULT_TIMEOUT_MS = 30_000
DEFAULT_TIMEOUT_MAX_MS = 120_000


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Capabilities(_Model):
    net_allowlist: list[str] = Field(default_factory=list, description="host:port the tool may reach.")
    env: list[str] = Field(default_factory=list, description="Names of secrets/variables the tool may read.")


class ToolRate(_Model):
    """A rate limit of this tool alone, counted across replicas like the `limits:` rules (docs/limits.md)."""

    requests: int = Field(ge=1, le=10_000_000, description="Most calls of the tool in any window_s.")
    window_s: float = Field(default=60.0, gt=0, le=86_400, description="The sliding window, seconds.")
    per: list[Literal["principal", "agent", "tenant"]] = Field(
        default_factory=list, description="Count each caller (or agent, or tenant) apart; empty: all callers."
    )


class Limits(_Model):
    timeout_ms_default: int = Field(default=DEFAULT_TIMEOUT_MS, ge=1)
    timeout_ms_max: int = Field(default=DEFAULT_TIMEOUT_MAX_MS, ge=1)
    concurrency_max: int | None = Field(
        default=None, ge=1, description="Most calls of the tool in flight, across every replica."
    )
    rate: list[ToolRate] = Field(default_factory=list, description="Rate limits of this tool.")


class RetryLimits(_Model):
    """What a caller's `retry_policy` may ask of this tool's backend: its wishes are clamped to these."""

    max_attempts: int = Field(
        default=3, ge=1, le=10, description="Most attempts of one call, whatever the caller's policy asks."
    )
    min_backoff_ms: int = Field(
        default=20,
        ge=0,
        le=60_000,
        description="Shortest wait between two attempts; a smaller base_ms or jittered wait is raised to it.",
    )


class Circuit(_Model):
    """When the circuit breaker stops calling the tool's backend (state is kept per backend host:port)."""

    window_ms: int = Field(default=10_000, ge=100, le=600_000, description="How far back attempts count.")
    min_attempts: int = Field(
        default=20, ge=1, le=100_000, description="Attempts in the window before the breaker may open."
    )
    failure_ratio: float = Field(
        default=0.9, gt=0, le=1, description="Share of failed attempts in the window that opens the circuit."
    )
    open_ms: int = Field(
        default=5_000, ge=1, le=600_000, description="How long an open circuit refuses calls before a probe."
    )


class Slo(_Model):
    success_rate_min: float = Field(default=0.99, ge=0, le=1)
    p95_latency_ms_max: int | None = Field(default=None, ge=1)


class Health(_Model):
    readiness: str | None = Field(default=None, description="URL answering 2xx when the tool can serve.")
    liveness: str | None = None


class ToolManifest(_Model):
    tool_id: str
    semver: str
    digest: str
    owner: str | None = None
    description: str = ""
    determinism: Determinism
    capabilities: Capabilities = Field(default_factory=Capabilities)
    limits: Limits = Field(default_factory=Limits)
    retry: RetryLimits = Field(default_factory=RetryLimits)
    circuit: Circuit = Field(default_factory=Circuit)
    slo: Slo = Field(default_factory=Slo)
    health: Health = Field(default_factory=Health)
    schema_: dict[str, Any] = Field(default_factory=dict, alias="schema")


class ManifestOverride(_Model):
    """The file form (`tools/<tool_id>/tool.yaml`): any part of a manifest, applied over the derived one."""

    tool_id: str | None = None
    owner: str | None = None
    description: str | None = None
    determinism: Determinism | None = None
    capabilities: Capabilities | None = None
    limits: Limits | None = None
    retry: RetryLimits | None = None
    circuit: Circuit | None = None
    slo: Slo | None = None
    health: Health | None = None


class ManifestError(ColonnadeError):
    """A manifest file is unreadable or invalid; one line per problem."""

    code = "S-TOOL-CONFIG-MANIFEST"


def derive_manifest(tool: Tool, override: ManifestOverride | None = None) -> ToolManifest:
    runtime = tool.runtime
    http = tool.binding if isinstance(tool.binding, HttpBinding) else None
    mcp = tool.binding if isinstance(tool.binding, McpBinding) else None
    binding_timeout = http.timeout_ms if http is not None else mcp.timeout_ms if mcp is not None else None
    default_ms = runtime.timeout_ms_default or binding_timeout or DEFAULT_TIMEOUT_MS
    limits = Limits(
        timeout_ms_default=default_ms,
        timeout_ms_max=max(default_ms, runtime.timeout_ms_max or DEFAULT_TIMEOUT_MAX_MS),
        concurrency_max=runtime.concurrency_max,
        rate=[ToolRate(requests=r.requests, window_s=r.window_s, per=r.per) for r in runtime.rate_limits],
    )
    allow = [host_port(http.base_url)] if http is not None else _mcp_reach(mcp) if mcp is not None else []
    env = [http.auth.secret] if http is not None and isinstance(http.auth, BackendAuth) else []
    manifest = ToolManifest(
        tool_id=tool.canonical_name,
        semver=tool.version,
        digest=tool.digest,
        owner=tool.owner,
        description=tool.description,
        determinism=tool.determinism,
        capabilities=Capabilities(net_allowlist=allow, env=env),
        limits=limits,
        slo=_slo_of(tool),
        health=Health(readiness=tool.health_url),
        schema={"input": tool.input_schema, "output": tool.output_schema},
    )
    if override is None:
        return manifest
    changes = {k: v for k, v in override.model_dump(exclude_none=True, exclude={"tool_id"}).items()}
    return manifest.model_validate({**manifest.model_dump(by_alias=True), **changes})


def _mcp_reach(binding: McpBinding) -> list[str]:
    """An MCP server's tools reach its URL, or for stdio the local process (`stdio:<server>`)."""
    if binding.transport == "stdio":
        return [f"stdio:{binding.server}"]
    return [host_port(binding.url)] if binding.url else []


def _slo_of(tool: Tool) -> Slo:
    """An organ card's objectives; other tools get the default until a manifest file sets one."""
    binding = tool.binding
    if not isinstance(binding, OrganBinding):
        return Slo()
    rate = binding.max_error_rate
    return Slo(
        success_rate_min=1 - rate if rate is not None else Slo().success_rate_min,
        p95_latency_ms_max=binding.p95_latency_ms,
    )


@lru_cache(maxsize=1024)
def host_port(url: str) -> str:
    """`host:port` of a URL, with the scheme's default port filled in (parsed once per URL: the
    network policy asks for every call)."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"{parts.hostname}:{port}"


class Manifests:
    """Manifests per tool, derived on first use and cached by digest; overrides from a folder."""

    def __init__(self, overrides: dict[str, ManifestOverride] | None = None) -> None:
        self._overrides = overrides or {}
        self._cache: dict[str, ToolManifest] = {}

    @classmethod
    def from_folder(cls, folder: Path | None) -> Manifests:
        """Read `folder/<tool_id>/tool.yaml` files (tool_id: canonical or wire name)."""
        if folder is None or not folder.is_dir():
            return cls()
        overrides: dict[str, ManifestOverride] = {}
        problems: list[str] = []
        for path in sorted(folder.glob("*/tool.yaml")):
            try:
                data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
                override = ManifestOverride.model_validate(data)
            except (OSError, yaml.YAMLError) as exc:
                problems.append(f"{path}: cannot read: {exc}")
                continue
            except ValidationError as exc:
                problems.extend(f"{path}: {'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
                continue
            overrides[override.tool_id or path.parent.name] = override
        if problems:
            raise ManifestError("\n".join(problems))
        return cls(overrides)

    def for_tool(self, tool: Tool) -> ToolManifest:
        cached = self._cache.get(tool.digest)
        if cached is None:
            override = self._overrides.get(tool.canonical_name) or self._overrides.get(tool.wire_name)
            if override is None:
                override = self._overrides.get(to_wire(tool.canonical_name))
            cached = derive_manifest(tool, override)
            self._cache[tool.digest] = cached
        return cached
