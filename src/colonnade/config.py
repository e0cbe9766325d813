"""Settings: one typed model, read from `colonnade.yaml` and overridden by `COLONNADE_*` variables.

Nested keys use a double underscore in the environment: `server.port` is `COLONNADE_SERVER__PORT`.
Every problem in a config file is reported at once, as `file: key: what is expected`.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, get_args, get_origin
from urllib.parse import unquote
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    WithJsonSchema,
    model_validator,
)

from colonnade.errors import ColonnadeError, not_utf8_position

__all__ = [
    "SECRET_PROVIDERS",
    "ApprovalSettings",
    "AuditSettings",
    "AuthSettings",
    "ClaimNames",
    "CommandPin",
    "ConfigError",
    "DelegationSettings",
    "ExchangeCredential",
    "ForwardCredential",
    "IssuerSettings",
    "LimitRuleSettings",
    "LimitsSettings",
    "LocalPrincipalSettings",
    "McpServerCredential",
    "McpServerSettings",
    "OrganSettings",
    "PolicySettings",
    "RoutingSettings",
    "SecretReference",
    "ServerSettings",
    "Settings",
    "SharedStateSettings",
    "TelemetrySettings",
    "TlsSettings",
    "TokenExchangeSettings",
    "ToolOverride",
    "UpstreamAuth",
    "UserOAuthCredential",
    "UserOAuthProvider",
    "VaultSettings",
    "credential_mode",
    "load_settings",
    "secret_variables",
    "server_definition_problems",
    "split_secret_reference",
]

ENV_PREFIX = "COLONNADE_"
DEFAULT_CONFIG_FILE = "colonnade.yaml"
_NOT_SETTINGS = {"CONFIG", "TOKEN"}  # COLONNADE_TOKEN: the client commands' credential
_SECRET_PREFIX = "SECRET_"  # COLONNADE_SECRET_<NAME> holds backend secrets, not settings
_LOOPBACK = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}


class ConfigError(ColonnadeError):
    """One or more problems in the configuration; `problems` holds one line each."""

    code = "S-TOOL-CONFIG-FILE"

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TlsSettings(_Section):
    """Serving https, and asking callers for client certificates (mTLS; RFC 8705 bound tokens)."""

    cert_file: Path | None = Field(
        default=None, description="PEM certificate (chain) the gateway presents; set: serve https."
    )
    key_file: Path | None = Field(
        default=None, description="PEM private key of cert_file (unencrypted); default: in cert_file."
    )
    client_ca_file: Path | None = Field(
        default=None, description="PEM CA certificate(s) that client certificates must chain to."
    )
    client_cert: Literal["none", "optional", "required"] = Field(
        default="none",
        description="Ask callers for a client certificate: none, optional (verified when sent) or "
        "required (a handshake without one fails).",
    )

    @model_validator(mode="after")
    def _coherent(self) -> TlsSettings:
        if self.cert_file is None and (self.key_file or self.client_ca_file or self.client_cert != "none"):
            raise ValueError("set cert_file (the server certificate) to serve TLS")
        if self.client_cert != "none" and self.client_ca_file is None:
            raise ValueError(
                f"client_cert: {self.client_cert} needs client_ca_file (the CA clients chain to)"
            )
        return self

    @property
    def enabled(self) -> bool:
        return self.cert_file is not None


class ServerSettings(_Section):
    host: str = Field(default="127.0.0.1", description="Interface the gateway listens on.")
    port: int = Field(default=8765, ge=0, le=65535, description="TCP port of the gateway.")
    page_size: int = Field(default=200, ge=1, le=10_000, description="Tools per tools/list page.")
    header_timeout_s: float = Field(
        default=10.0,
        gt=0,
        le=3600,
        description="Longest time from a connection's first byte (or its opening) to the end of a request's"
        " headers; slower clients get 408 and are disconnected.",
    )
    body_timeout_s: float = Field(
        default=30.0,
        gt=0,
        le=3600,
        description="Longest time from the end of a request's headers to the end of its body.",
    )
    keep_alive_timeout_s: int = Field(
        default=5, ge=1, le=3600, description="Seconds an idle keep-alive connection stays open."
    )
    max_connections: int = Field(
        default=1000, ge=1, description="Open connections at most; one more is answered 503 and closed."
    )
    max_header_bytes: int = Field(
        default=64 * 1024, ge=1024, description="Largest request line plus headers accepted (431 above)."
    )
    drain_timeout_s: float = Field(
        default=10.0,
        ge=0,
        le=3600,
        description="On a stop signal, how long calls in flight may finish; then they end retryable.",
    )
    max_calls_in_flight: int | None = Field(
        default=256,
        ge=1,
        description="Calls (POST /mcp, /v1/calls) in flight at most; more are refused R-CAP-OVERLOAD."
        " null: no bound.",
    )
    shed_late_calls: bool = Field(
        default=True,
        description="Refuse at once (R-CAP-OVERLOAD) a call that the work in front of it would make miss"
        " its deadline.",
    )
    max_mcp_sessions_per_caller: int = Field(
        default=32,
        ge=1,
        description="MCP sessions (2025-11-25 and older clients) one caller may hold: its principal, or an"
        " anonymous caller's address. One more closes its own least recently used idle session.",
    )
    max_mcp_sessions: int = Field(
        default=1000,
        ge=1,
        description="MCP sessions all callers together may hold; one more closes an idle session of the"
        " caller holding the most. Refused R-CAP-SESSIONS only when none is idle.",
    )
    mcp_session_idle_s: float = Field(
        default=300.0,
        gt=0,
        le=24 * 3600,
        description="Seconds an MCP session may go without a request in flight before it is closed.",
    )
    mcp_session_streams: bool = Field(
        default=True,
        description="Answer the requests of an MCP session (2025-11-25 and older clients) whose client"
        " declares elicitation over an SSE stream, so the gateway can ask it during a call (confirming a"
        " call that awaits approval, a downstream MCP server's questions and progress); about 1.2 ms"
        " more CPU per call of such a session. Other sessions,"
        " and false: one JSON body per request (no questions; such calls answer pending at once).",
    )
    mcp_plain_calls: bool = Field(
        default=True,
        description="Serve a plain 2026-07-28 tools/call at /mcp (one JSON answer: no session, no progress"
        " token) beside the MCP SDK's transport, with the SDK's own checks, runner and serialisation but"
        " without its per-request transport machinery; every other request (a handshake-era session's"
        " included), and all of them when false, goes through the SDK's transport. Answers are the"
        " same either way.",
    )
    max_request_bytes: int = Field(
        default=1024 * 1024,
        ge=1024,
        le=64 * 1024 * 1024,
        description="Largest request body any route accepts.",
    )
    allowed_hosts: list[str] = Field(
        default_factory=list,
        description="Host header values served besides the loopback names ('name' or 'name:*' for any port).",
    )
    allowed_origins: list[str] = Field(
        default_factory=list,
        description="Origin header values served besides loopback pages (e.g. 'https://gw.example.com').",
    )
    admin_api: bool = Field(
        default=False,
        description="Allow adding, removing and restarting downstream servers over REST (/v1/servers). "
        "Adding a stdio server starts a process on this host: enable it only where every caller may.",
    )
    tls: TlsSettings = Field(default_factory=TlsSettings)

    @property
    def scheme(self) -> str:
        return "https" if self.tls.enabled else "http"

    @property
    def mcp_url(self) -> str:
        """Where a client on this machine reaches the MCP endpoint (a wildcard host means loopback)."""
        return f"{self.base_url}/mcp"

    @property
    def base_url(self) -> str:
        """Where a client on this machine reaches the REST API (`colonnade status`, `tools list`)."""
        host = _LOOPBACK.get(self.host, self.host)
        shown = f"[{host}]" if ":" in host else host
        return f"{self.scheme}://{shown}:{self.port}"


class LocalPrincipalSettings(_Section):
    """Who calls over stdio: the user who started the process."""

    id: str = Field(default="local", min_length=1, description="Principal id in logs and audit records.")
    tenant: str | None = Field(default=None, description="Tenant the local user is bound to (none: all).")
    persona: str = Field(default="admin", description="Persona of the local user.")


class RoutingSettings(_Section):
    """Which tools a client sees: top-k per conversation instead of the whole catalog."""

    enabled: bool = Field(
        default=False,
        description="Serve the meta tools (search_tools, describe_tool) and routed tools/list to clients.",
    )
    top_k: int = Field(default=8, ge=1, le=200, description="Tools a routed tools/list shows.")
    per_server_cap: int = Field(
        default=3, ge=1, le=200, description="At most this many tools of one API, unless the query names it."
    )
    confidence_threshold: float = Field(
        default=0.1, ge=0, le=1, description="Below this confidence the fallback tools are served instead."
    )
    fallback_tools: list[str] = Field(
        default_factory=list, description="Canonical names served when the router is not confident."
    )
    always_on_tools: list[str] = Field(
        default_factory=list, description="Canonical names every routed tools/list includes."
    )
    bundles: dict[str, Annotated[list[str], Field(min_length=1)]] = Field(
        default_factory=dict, description="Named groups of canonical names that are selected together."
    )
    context_turns: int = Field(
        default=6, ge=1, le=100, description="Recent user/assistant messages the routing query is built from."
    )
    session_ttl_s: float = Field(
        default=3600.0,
        gt=0,
        le=604_800,
        description="How long a routing session's context is kept after its last request (shared by "
        "the replicas when shared_state.redis_url is set).",
    )
    learned_reload_s: float = Field(
        default=60.0,
        gt=0,
        le=86_400,
        description="How often the tool co-occurrence other replicas learned is loaded from the database "
        "(besides at once when one says it saved).",
    )


_ConsumerLabel = Literal["tenant", "principal", "agent"]
_SAMPLERS = Literal[
    "always_on",
    "always_off",
    "traceidratio",
    "parentbased_always_on",
    "parentbased_always_off",
    "parentbased_traceidratio",
]


class TelemetrySettings(_Section):
    """OpenTelemetry export over OTLP (HTTP/protobuf); the standard `OTEL_*` variables set these keys too."""

    otlp_endpoint: str | None = Field(
        default=None,
        description="Base URL of an OTLP/HTTP receiver (e.g. http://127.0.0.1:4318); /v1/traces, "
        "/v1/metrics and /v1/logs are appended. Unset: nothing leaves the process.",
    )
    otlp_traces_endpoint: str | None = Field(default=None, description="Full URL for traces (as given).")
    otlp_metrics_endpoint: str | None = Field(default=None, description="Full URL for metrics (as given).")
    otlp_logs_endpoint: str | None = Field(
        default=None, description="Full URL for trace events as OTLP logs (as given)."
    )
    otlp_protocol: Literal["http/protobuf"] = Field(
        default="http/protobuf", description="Only OTLP over HTTP with protobuf bodies is built in."
    )
    otlp_headers: dict[str, str] = Field(
        default_factory=dict, description="Headers of every export request (e.g. an API key of the backend)."
    )
    otlp_timeout_s: float = Field(default=10.0, gt=0, le=300, description="Time limit of one export request.")
    service_name: str = Field(default="colonnade", min_length=1, description="The `service.name` resource.")
    resource_attributes: dict[str, str] = Field(
        default_factory=dict, description="More resource attributes (deployment.environment, ...)."
    )
    traces: bool = Field(default=True, description="Export spans (false: OTEL_TRACES_EXPORTER=none).")
    metrics: bool = Field(default=True, description="Export metrics (false: OTEL_METRICS_EXPORTER=none).")
    traces_sampler: _SAMPLERS = Field(
        default="parentbased_always_on", description="Which calls' spans are recorded and exported."
    )
    traces_sampler_arg: float | None = Field(
        default=None, ge=0, le=1, description="The ratio of the traceidratio samplers (default 1.0)."
    )
    max_queue_size: int = Field(
        default=2048, ge=1, le=1_000_000, description="Ended spans held for export; beyond it, dropped."
    )
    max_export_batch_size: int = Field(default=512, ge=1, le=100_000, description="Spans per export request.")
    schedule_delay_s: float = Field(default=5.0, gt=0, le=3600, description="Longest wait between exports.")
    metrics_interval_s: float = Field(default=60.0, gt=0, le=86_400, description="Between metric exports.")
    consumer_labels: list[_ConsumerLabel] = Field(
        default_factory=lambda: list[_ConsumerLabel](["tenant"]),
        description="Who-called labels of the per-consumer call series ([] leaves them out).",
    )
    consumer_label_values_max: int = Field(
        default=100, ge=1, le=100_000, description="Distinct values per consumer label; later ones: (other)."
    )
    history_flush_s: float = Field(
        default=10.0,
        gt=0,
        le=3600,
        description="How often the rolled-up metrics history (per tool and API, per minute and per five "
        "minutes) is written to the store, off the calls' path; a restart loses at most this much.",
    )
    events_keep: int = Field(
        default=1000, ge=0, le=100_000, description="Trace events kept in memory for /v1/status and the page."
    )
    events_jsonl: Path | None = Field(
        default=None, description="Append every trace event to this JSONL file (relative: under the cwd)."
    )
    events_log: bool = Field(default=False, description="Write every trace event as a log line too.")
    events_otlp: bool = Field(
        default=True,
        description="Export trace events as OTLP logs when an endpoint is set (OTEL_LOGS_EXPORTER).",
    )

    @model_validator(mode="after")
    def _batch_fits_queue(self) -> TelemetrySettings:
        if self.max_export_batch_size > self.max_queue_size:
            raise ValueError("max_export_batch_size must not exceed max_queue_size")
        return self

    @property
    def traces_url(self) -> str | None:
        return self.otlp_traces_endpoint or _signal_url(self.otlp_endpoint, "v1/traces")

    @property
    def metrics_url(self) -> str | None:
        return self.otlp_metrics_endpoint or _signal_url(self.otlp_endpoint, "v1/metrics")

    @property
    def logs_url(self) -> str | None:
        return self.otlp_logs_endpoint or _signal_url(self.otlp_endpoint, "v1/logs")


def _signal_url(base: str | None, path: str) -> str | None:
    return None if base is None else base.rstrip("/") + "/" + path


class IssuerSettings(_Section):
    """One OAuth issuer whose access tokens the gateway accepts: its keys by JWKS URL or inline."""

    issuer: str = Field(min_length=1, description="The `iss` value of its tokens (usually its URL).")
    jwks_url: str | None = Field(
        default=None, description="Where its public keys are published (https, or http on loopback)."
    )
    keys: list[dict[str, Any]] = Field(
        default_factory=list, description="Its public keys inline (JWKs), instead of a jwks_url."
    )
    algorithms: list[str] = Field(
        default_factory=lambda: ["RS256", "ES256", "PS256"],
        min_length=1,
        description="Signature algorithms accepted from this issuer ('none' never is).",
    )
    audience: str | None = Field(
        default=None, description="The `aud` its tokens must carry; default: auth.resource."
    )

    @model_validator(mode="after")
    def _one_key_source(self) -> IssuerSettings:
        if (self.jwks_url is None) == (not self.keys):
            raise ValueError("give exactly one of jwks_url and keys")
        if any(alg.lower() == "none" for alg in self.algorithms):
            raise ValueError("'none' is not a signature algorithm")
        return self


class ClaimNames(_Section):
    """Which token claims carry what the gateway reads (issuers name them differently)."""

    subject: str = Field(default="sub", description="Who the token is about (the principal id).")
    tenant: str = Field(default="tenant", description="The principal's tenant.")
    team: str = Field(default="team", description="The principal's team (owner of APIs).")
    persona: str = Field(default="persona", description="admin, product_owner, developer, consumer, ...")
    scopes: str = Field(default="scope", description="Scopes: a space-separated string or a list.")
    agent: str = Field(default="agent_id", description="Names the registered agent an agent token is for.")


class DelegationSettings(_Section):
    """The gateway as the authorization server of its own principals: RFC 8693 token exchange that
    narrows (docs/governance.md, Delegation)."""

    enabled: bool = Field(
        default=False,
        description="Serve POST /oauth/token: a principal's token is exchanged for a narrower, "
        "DPoP-bound token of a registered sub-agent.",
    )
    max_depth: int = Field(
        default=3, ge=1, le=10, description="Longest actor chain (nested act claims) a delegated token holds."
    )
    max_ttl_s: int = Field(
        default=600,
        ge=10,
        le=600,
        description="Longest lifetime of a delegated token (never beyond its parent's expiry).",
    )
    key_file: Path | None = Field(
        default=None,
        description="The delegation signing key (ES256 JWK); default data_dir/delegation-signing.jwk, "
        "made on first use. Give every replica the same file.",
    )


class AuthSettings(_Section):
    """Who may call: credentials on every HTTP route (except /healthz and /readyz) once configured."""

    enabled: bool = Field(
        default=False,
        description="Require a credential even without an issuer (API keys only); an issuer or the "
        "development issuer turns authentication on as well.",
    )
    resource: str | None = Field(
        default=None,
        description="The gateway's resource URL (token audience); default http(s)://HOST:PORT/mcp.",
    )
    issuers: list[IssuerSettings] = Field(default_factory=list, description="Trusted OAuth issuers.")
    dev_issuer: bool = Field(
        default=False,
        description="Trust the development issuer (key under data_dir; `colonnade token mint`).",
    )
    claims: ClaimNames = Field(default_factory=ClaimNames)
    leeway_s: int = Field(default=30, ge=0, le=300, description="Clock skew allowed on exp, nbf and iat.")
    jwks_cache_s: float = Field(default=300.0, gt=0, description="How long fetched issuer keys are reused.")
    api_keys: bool = Field(default=True, description="Accept API keys (colonnade keys create).")
    api_key_rotation_overlap_s: float = Field(
        default=86_400.0, ge=0, description="How long a rotated API key stays valid beside its successor."
    )
    api_key_cache_s: float = Field(
        default=5.0, ge=0, le=300, description="How long a checked API key is trusted before it is re-read."
    )
    agent_token_max_s: int = Field(
        default=600, ge=1, le=600, description="Longest lifetime (exp - iat) of an agent token."
    )
    dpop_window_s: int = Field(
        default=60, ge=1, le=600, description="How far a DPoP proof's iat may lie from now."
    )
    dynamic_registration: bool = Field(
        default=False, description="Let security officers register agents over RFC 7591 (POST /register)."
    )
    page_session_s: int = Field(
        default=1800,
        ge=60,
        le=43_200,
        description="How long a page login lasts (the session cookie's lifetime); then the visitor logs "
        "in again.",
    )
    subscription_approval: list[str] = Field(
        default_factory=list,
        description="APIs ('tenant:api', globs) whose subscriptions need their product owner's approval.",
    )
    delegation: DelegationSettings = Field(default_factory=DelegationSettings)

    @property
    def configured(self) -> bool:
        """Whether every HTTP route needs a credential."""
        return self.enabled or bool(self.issuers) or self.dev_issuer


class AuditSettings(_Section):
    """The audit log (a table of the gateway's database, hash-chained)."""

    key_file: Path | None = Field(
        default=None,
        description="Secret key of the audit log's argument hashes and pseudonyms; default "
        "data_dir/audit.key, made on first use. Give every replica the same file.",
    )


class PlatformSettings(_Section):
    """The gateway's own platform functions as governed tools (ADR-012; docs/platform-tools.md)."""

    tools: bool | None = Field(
        default=None,
        description="Serve the core tools (colonnade__list_apis, ...) to the personas ADR-012 names. "
        "Default: when authentication is configured (without it every caller is the one loopback "
        "user, who then sees them all); true serves them without authentication too; false never.",
    )

    alert_interval_s: float = Field(
        default=60.0,
        gt=0,
        le=86_400,
        description="How often the gateway evaluates its alert rules in the background "
        "(colonnade__list_alerts "
        "also evaluates them when called).",
    )

    def served(self, authenticated: bool) -> bool:
        return self.tools if self.tools is not None else authenticated


class ApprovalSettings(_Section):
    """Human approval of calls that need it (destructive tools, contract flags, policy obligations)."""

    approvers: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Personas allowed to approve calls, per API ('tenant:api', globs allowed); the first "
        "matching entry applies, else `default_approvers`.",
    )
    default_approvers: list[str] = Field(
        default_factory=lambda: ["admin"],
        description="Personas allowed to approve calls of an API that `approvers` does not name (always "
        "within the tool's tenant; platform admins in every tenant).",
    )
    request_ttl_s: float = Field(
        default=86_400.0, gt=0, le=30 * 86_400, description="How long a call waits for a decision."
    )
    token_ttl_s: int = Field(
        default=300, ge=10, le=300, description="Lifetime of an approval token (at most 5 minutes)."
    )
    key_file: Path | None = Field(
        default=None,
        description="Signing key (JWK) of approval tokens; default data_dir/approval-signing.jwk, made on "
        "first use. Give every replica the same file.",
    )
    retention_s: float = Field(
        default=30 * 86_400.0,
        gt=0,
        description="How long a finished approval (denied, used, expired, or approved with a spent-out "
        "token) is kept before it is deleted; pending ones never are. The audit log keeps its history.",
    )


GuardAction = Literal["block", "redact", "approve", "audit", "off"]
"""What a guardrail finding does: refuse the call, hide the value, ask a human, only record it, nothing."""

GuardKind = Literal["payment_card", "national_id", "email", "phone", "secret", "prompt_injection"]
GUARD_KINDS: tuple[GuardKind, ...] = get_args(GuardKind)
FlowLabel = Literal["reads_private", "ingests_untrusted", "egress"]
FLOW_LABELS_ALL: tuple[FlowLabel, ...] = get_args(FlowLabel)
"""What a tool does with information, for the session's flow (docs/governance.md "Information flow")."""


def _default_argument_actions() -> dict[GuardKind, GuardAction]:
    return {"secret": "block"}


def _default_result_actions() -> dict[GuardKind, GuardAction]:
    return {"payment_card": "redact", "national_id": "redact", "secret": "redact"}


class GuardrailRuleSettings(_Section):
    """Actions for the tools whose canonical name matches `tools` (a glob: `acme:*`, `acme:crm:*`)."""

    tools: str = Field(min_length=1, description="Glob over canonical names (tenant:api:operation).")
    arguments: dict[GuardKind, GuardAction] = Field(
        default_factory=dict, description="kind -> action on the call's arguments."
    )
    results: dict[GuardKind, GuardAction] = Field(
        default_factory=dict, description="kind -> action on the call's result."
    )


class GuardrailSettings(_Section):
    """Detectors on arguments and results; what each finding does (docs/governance.md "Guardrails")."""

    enabled: bool = Field(default=True, description="Scan the arguments and results of served tools.")
    detectors: list[GuardKind] = Field(
        default_factory=lambda: list(GUARD_KINDS), description="The kinds detected (default: all)."
    )
    arguments: dict[GuardKind, GuardAction] = Field(
        default_factory=_default_argument_actions,
        description="kind -> action on arguments; a kind not named is only audited.",
    )
    results: dict[GuardKind, GuardAction] = Field(
        default_factory=_default_result_actions,
        description="kind -> action on results; a kind not named is only audited (approve counts as block).",
    )
    rules: list[GuardrailRuleSettings] = Field(
        default_factory=list,
        description="Per tenant or tool: later rules win over earlier, all over the defaults.",
    )


class FlowSettings(_Section):
    """Information-flow labels touched in a session (docs/governance.md "Information flow")."""

    enabled: bool = Field(default=True, description="Track the labels of the tools a session called.")
    approve_egress_after_untrusted: bool = Field(
        default=True,
        description="The built-in rule: a call of an egress tool in a session that took in untrusted "
        "input waits for a human's approval (parked, not refused).",
    )
    session_s: float = Field(
        default=3600.0, gt=0, description="How long a session's labels are kept after its last labelled call."
    )


class PolicySettings(_Section):
    """The Rego policy gate: which policy files decide, and how often they are re-read."""

    enabled: bool = Field(default=True, description="Evaluate the policies on every call of a served tool.")
    builtin: bool = Field(
        default=False,
        description="Load the policies shipped with Colonnade (destructive tools need a human's approval):"
        " the approval gate enforces that rule natively, so this is for extending it in Rego (about 0.7 ms"
        " of CPU per call).",
    )
    directories: list[Path] = Field(
        default_factory=list,
        description="Folders of your own .rego files (their *_test.rego files are tests, not policies).",
    )
    reload_interval_s: float = Field(
        default=2.0,
        ge=0,
        le=3600,
        description="How often the policy files are checked for changes and reloaded; 0: only on request.",
    )
    isolate_compilation: bool = Field(
        default=True,
        description="Compile a new policy set in a child process first, so that a policy the Rego engine"
        " cannot compile never takes the gateway down.",
    )
    time_zones: dict[str, str] = Field(
        default_factory=dict,
        description="IANA time zone of each tenant (e.g. acme: Europe/Paris), for input.time.local.",
    )
    data: dict[str, Any] = Field(
        default_factory=dict,
        description="Settings your policies read as data.colonnade.settings (e.g. business hours).",
    )
    attestation_window_s: int = Field(
        default=60, ge=5, le=600, description="How far an attestation's iat may be from now, either way."
    )

    @model_validator(mode="after")
    def _known_time_zones(self) -> PolicySettings:
        for tenant, zone in self.time_zones.items():
            try:
                ZoneInfo(zone)
            except (ZoneInfoNotFoundError, ValueError):
                raise ValueError(
                    f"time_zones.{tenant}: {zone!r} is not an IANA time zone (e.g. Europe/Paris, UTC)"
                ) from None
        return self


_SECRET_NAME = r"^[A-Za-z_][A-Za-z0-9_.-]{0,127}$"
_SECRET_NAME_RE = re.compile(_SECRET_NAME)
SECRET_PROVIDERS = ("env", "file", "store")
_NOT_ENV_CHARS = re.compile(r"[^A-Za-z0-9_]")


def secret_variables(name: str) -> tuple[str, str]:
    """The variables the env provider reads for `name`: `COLONNADE_SECRET_<NAME>`, then `<name>`."""
    return ENV_PREFIX + _SECRET_PREFIX + _NOT_ENV_CHARS.sub("_", name).upper(), name


def split_secret_reference(reference: str) -> tuple[str, str]:
    """`store:crm-token` -> ("store", "crm-token"); a bare name is the environment's (today's form)."""
    provider, colon, rest = reference.partition(":")
    if colon and provider in SECRET_PROVIDERS:
        return provider, rest
    return "env", reference


def _reference_from_mapping(value: object) -> object:
    """`{provider: store, name: crm-token}` or `{provider: file, path: /run/secrets/crm}` as one string."""
    if not isinstance(value, Mapping):
        return value
    provider = value.get("provider", "env")
    if provider not in SECRET_PROVIDERS:
        raise ValueError(f"secret provider {provider!r} is not one of {', '.join(SECRET_PROVIDERS)}")
    key = "path" if provider == "file" else "name"
    target = value.get(key)
    if not isinstance(target, str) or not target:
        raise ValueError(f"a secret of provider {provider} needs `{key}`")
    unknown = sorted(str(field) for field in set(value) - {"provider", key})
    if unknown:
        raise ValueError(
            f"a secret of provider {provider} has `provider` and `{key}`, not {', '.join(unknown)}"
        )
    return f"{provider}:{target}"


def _checked_reference(reference: str) -> str:
    provider, target = split_secret_reference(reference)
    if provider == "file":
        if not target or "\n" in target or "\x00" in target:
            raise ValueError("a file secret needs the file's path: file:/run/secrets/crm-token")
    elif not _SECRET_NAME_RE.match(target):
        raise ValueError(
            f"{reference!r} is not a secret reference: give a secret's name (letters, digits, _ . -; "
            "e.g. CRM_TOKEN), env:NAME, store:NAME or file:/path, never the secret itself"
        )
    return reference


_NAMED = _SECRET_NAME[1:]  # the name pattern without its anchor, to follow a provider's prefix
_PATH = "[^\n\x00]+(?!\n)$"  # one line without NUL (`$` alone would let one final newline by)
SecretReference = Annotated[
    str,
    BeforeValidator(_reference_from_mapping),
    AfterValidator(_checked_reference),
    WithJsonSchema(
        {
            "description": "A secret's name (the environment's: COLONNADE_SECRET_<NAME>), or env:NAME, "
            "store:NAME, file:/path, or {provider: env|store, name} / {provider: file, path}.",
            "oneOf": [
                {"type": "string", "pattern": f"^(?:(?:env|store):)?{_NAMED}"},
                {"type": "string", "pattern": f"^file:{_PATH}"},
                {
                    "type": "object",
                    "properties": {
                        "provider": {"enum": ["env", "store"]},
                        "name": {"type": "string", "pattern": _SECRET_NAME},
                    },
                    "required": ["name"],
                    "additionalProperties": False,
                },
                {
                    "type": "object",
                    "properties": {
                        "provider": {"const": "file"},
                        "path": {"type": "string", "pattern": f"^{_PATH}"},
                    },
                    "required": ["provider", "path"],
                    "additionalProperties": False,
                },
            ],
        }
    ),
]
"""Where a secret comes from, held as one string (`provider:target`; bare: the environment)."""


class UpstreamAuth(_Section):
    """How the gateway authenticates to a Streamable HTTP server: a secret's name, never its value."""

    mode: Literal["static"] = Field(default="static", description="static: the gateway's one secret.")
    type: Literal["bearer", "header"] = Field(default="bearer", description="bearer | header")
    secret: SecretReference = Field(
        description="The secret: its name (COLONNADE_SECRET_<NAME>) or a reference."
    )
    header: str | None = Field(default=None, description="Header name for `type: header`.")

    @model_validator(mode="after")
    def _header_for_header_auth(self) -> UpstreamAuth:
        if self.type == "header" and not self.header:
            raise ValueError("auth type 'header' needs `header` (the header that carries the secret)")
        return self


class ForwardCredential(_Section):
    """Send the caller's own token upstream, and only when it was issued for that upstream.

    A token whose `aud` does not name `audience` is never sent: the call is refused instead, so a
    token meant for the gateway (or for another upstream) cannot be replayed at this one.
    """

    mode: Literal["forward"] = Field(
        description="forward: the caller's token, when its aud names the upstream."
    )
    audience: str = Field(
        min_length=1, description="The upstream's identifier the caller's token must name in aud."
    )


class ExchangeCredential(_Section):
    """Trade the caller's token (RFC 8693) for one issued to the upstream alone, at `token_exchange`.

    The subject is the caller, the actor the gateway (the client that asks) or, with `actor: agent`
    and an agent calling, the agent (its token sent as the actor token), the audience this upstream
    and the scopes at most these; the token is cached until shortly before it expires.
    """

    mode: Literal["exchange"] = Field(description="exchange: RFC 8693 token exchange for each caller.")
    audience: str = Field(min_length=1, description="The upstream's identifier (the exchanged token's aud).")
    scopes: list[Annotated[str, Field(pattern=r"^[\x21\x23-\x5b\x5d-\x7e]+$")]] = Field(
        default_factory=list, description="Scopes asked for (the exchanged token has at most these)."
    )
    actor: Literal["gateway", "agent"] = Field(
        default="gateway",
        description="Who the exchange names as actor: the gateway (its client), or agent: when an agent"
        " calls, an actor token naming the agent (`act.sub` agent:<id>); a user calling alone has none.",
    )


class UserOAuthCredential(_Section):
    """Each user's own grant at the upstream, made once on the "Connected accounts" page.

    The user authorizes the gateway at `provider` (authorization code with PKCE); the refresh token
    is kept sealed, access tokens in memory until they expire. A caller who has not connected is
    refused with the page's address.
    """

    mode: Literal["user_oauth"] = Field(description="user_oauth: the caller's own grant at the upstream.")
    provider: str = Field(
        pattern=r"^[a-z][a-z0-9_-]{0,62}$", description="The `upstream_oauth:` entry that grants it."
    )


def credential_mode(value: object) -> str:
    """The `mode` of an upstream credential entry; entries written before modes existed are static."""
    mode = value.get("mode", "static") if isinstance(value, dict) else getattr(value, "mode", "static")
    return mode if isinstance(mode, str) else "static"


McpServerCredential = Annotated[
    Annotated[UpstreamAuth, Tag("static")]
    | Annotated[ForwardCredential, Tag("forward")]
    | Annotated[ExchangeCredential, Tag("exchange")]
    | Annotated[UserOAuthCredential, Tag("user_oauth")],
    Discriminator(
        credential_mode,
        custom_error_type="credential_mode",
        custom_error_message="auth.mode must be static, forward, exchange or user_oauth",
    ),
]


class TokenExchangeSettings(_Section):
    """The authorization server that exchanges callers' tokens for upstream ones (RFC 8693).

    The gateway authenticates to it as an OAuth client (client_secret_basic); the secret is named
    here and read from the secrets resolver, never written in the file.
    """

    token_endpoint: str = Field(pattern=r"^https?://[^\s/]+", description="The AS's token endpoint URL.")
    client_id: str = Field(min_length=1, description="The gateway's client id at the AS (the actor).")
    client_secret: SecretReference = Field(
        description="The secret holding the client secret (name or reference)."
    )
    timeout_s: float = Field(default=5.0, gt=0, le=60, description="Longest wait for one exchange.")
    expiry_margin_s: float = Field(
        default=30.0,
        ge=0,
        le=600,
        description="An exchanged token is reused until this long before it expires.",
    )
    cache_size: int = Field(
        default=10_000, ge=1, description="Exchanged tokens kept (least recently used go)."
    )


class UserOAuthProvider(_Section):
    """An upstream's OAuth authorization server where each user grants the gateway access (RFC 6749).

    The gateway is a confidential client there (client_secret_basic, secret named, never written);
    its redirect URI is `<gateway>/ui/connections/callback`, registered at the provider.
    """

    display_name: str | None = Field(default=None, description="Name shown on the page (default: the key).")
    authorization_endpoint: str = Field(
        pattern=r"^https?://[^\s/]+", description="Where the user's browser is sent to authorize."
    )
    token_endpoint: str = Field(pattern=r"^https?://[^\s/]+", description="Code and refresh exchanges.")
    revocation_endpoint: str | None = Field(
        default=None,
        pattern=r"^https?://[^\s/]+",
        description="RFC 7009 revocation, called when a user disconnects or is revoked.",
    )
    client_id: str = Field(min_length=1, description="The gateway's client id at the provider.")
    client_secret: str = Field(
        pattern=_SECRET_NAME, description="Name of the secret holding the client secret."
    )
    scopes: list[Annotated[str, Field(pattern=r"^[\x21\x23-\x5b\x5d-\x7e]+$")]] = Field(
        default_factory=list, description="Scopes asked for when a user connects."
    )
    timeout_s: float = Field(default=5.0, gt=0, le=60, description="Longest wait for the provider.")
    expiry_margin_s: float = Field(
        default=30.0, ge=0, le=600, description="An access token is refreshed this long before it expires."
    )


class ToolOverride(_Section):
    """What the operator says about one upstream tool; wins over what the server declares."""

    description: str | None = Field(default=None, description="Description clients see.")
    side_effects: Literal["none", "read", "write", "destructive"] | None = Field(
        default=None, description="Overrides the side effects derived from the tool's annotations."
    )
    requires_human_approval: bool | None = Field(
        default=None, description="Calls wait for a human's approval (parked for an approver)."
    )
    flow_labels: list[FlowLabel] = Field(
        default_factory=list, description="reads_private | ingests_untrusted | egress (information flow)."
    )


class SandboxSettings(_Section):
    """How a child process the gateway starts (a stdio server, an organ sidecar) is confined."""

    enabled: bool = Field(
        default=False,
        description="Confine the process (docs/servers.md); false: it runs as the gateway's user.",
    )
    enforce: Literal["strict", "warn"] = Field(
        default="strict",
        description="strict: refuse to start when a setting cannot be enforced on this host; warn: start,"
        " say what is missing in the log, `servers status` and `servers check`.",
    )
    user: str = Field(
        default="nobody",
        description="Unprivileged user it runs as (needs a root gateway; otherwise a user namespace).",
    )
    memory_mb: int | None = Field(default=512, gt=0, description="Memory limit (cgroup, else RLIMIT_AS).")
    cpu_percent: int | None = Field(
        default=100, gt=0, le=6400, description="CPU share limit, 100 = one core (cgroup cpu quota)."
    )
    cpu_time_s: int | None = Field(
        default=None, gt=0, description="Total CPU seconds before it is killed (RLIMIT_CPU); unset: none."
    )
    pids_max: int | None = Field(
        default=64, gt=0, description="Most processes at once (cgroup, else RLIMIT_NPROC)."
    )
    network: Literal["none", "loopback", "allow", "host"] = Field(
        default="none",
        description="none: no network at all; loopback: its own loopback only; allow: its own loopback plus"
        " the host's loopback ports in net_allowlist (forwarded); host: the gateway's network.",
    )
    net_allowlist: list[str] = Field(
        default_factory=list,
        description="network allow: the host's loopback ports it may reach, as 127.0.0.1:PORT or"
        " localhost:PORT (other hosts cannot be enforced: refused under strict).",
    )
    fs_read: list[Path] = Field(
        default_factory=list, description="Paths it may read although hidden (under the gateway's home)."
    )
    fs_write: list[Path] = Field(default_factory=list, description="Paths it may write (bound read-write).")
    hide: list[Path] = Field(
        default_factory=list,
        description="More paths it never sees (the data directory and the gateway's HOME always are hidden).",
    )


class CommandPin(_Section):
    """A stdio server's command pinned by its files' sha256: a changed file waits for re-admission."""

    sha256: str | None = Field(
        default=None,
        pattern=r"^[0-9a-f]{64}$",
        description="Expected sha256 (hex) of the command's executable file, as resolved on PATH; unset:"
        " the files are pinned at the first start (trust on first use).",
    )
    files: list[Path] = Field(
        default_factory=list,
        description="More files pinned with it (an interpreter's scripts: the server's .py or .js files);"
        " relative paths are taken from the server's cwd.",
    )


class McpServerSettings(_Section):
    """One downstream MCP server whose tools the gateway serves as `{tenant}:{name}:{tool}`."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$", description="Server name (API segment)")
    tenant: str = Field(default="default", pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$")
    transport: Literal["stdio", "http"] = Field(description="stdio (local process) or http (Streamable HTTP)")
    command: str | None = Field(default=None, description="stdio: the executable to start.")
    args: list[str] = Field(default_factory=list, description="stdio: its arguments.")
    env: dict[str, str] = Field(default_factory=dict, description="stdio: extra environment (no secrets).")
    secret_env: dict[str, SecretReference] = Field(
        default_factory=dict,
        description="stdio: variable -> the secret (name or reference) whose value it gets.",
    )
    cwd: Path | None = Field(default=None, description="stdio: working directory.")
    sandbox: SandboxSettings = Field(
        default_factory=SandboxSettings, description="stdio: how the process is confined (docs/servers.md)."
    )
    pin_command: CommandPin | None = Field(
        default=None,
        description="stdio: pin the command's file digests; a changed file is refused until re-admitted"
        " (`colonnade servers admit NAME @command`, docs/servers.md).",
    )
    url: str | None = Field(default=None, pattern=r"^https?://[^\s/]+", description="http: endpoint URL.")
    headers: dict[str, str] = Field(default_factory=dict, description="http: extra headers (no secrets).")
    auth: McpServerCredential | None = Field(
        default=None, description="http: credential by mode: static (a secret's name), forward or exchange."
    )
    protocol: Literal["auto", "legacy"] = Field(
        default="auto", description="auto: 2026-07-28 when the server offers it; legacy: the handshake era."
    )
    start: Literal["eager", "lazy"] = Field(
        default="eager", description="eager: connect at start-up; lazy: list tools, connect on first use."
    )
    connect_timeout_s: float = Field(default=30.0, gt=0, le=600, description="Start-up and handshake limit.")
    call_timeout_s: float = Field(default=30.0, gt=0, le=600, description="Default deadline of a call.")
    idle_timeout_s: float = Field(default=300.0, gt=0, description="lazy: disconnect after this idle time.")
    refresh_s: float | None = Field(
        default=None, gt=0, description="Re-list tools this often (besides the server's list-change notices)."
    )
    restart_backoff_s: float = Field(default=0.5, gt=0, le=60, description="First wait before a restart.")
    restart_backoff_max_s: float = Field(default=30.0, gt=0, le=3600, description="Longest wait to restart.")
    allow_tools: list[str] | None = Field(default=None, description="Serve only these tool names (globs).")
    deny_tools: list[str] = Field(default_factory=list, description="Never serve these tool names (globs).")
    tools: dict[str, ToolOverride] = Field(default_factory=dict, description="Overrides by tool name.")
    admit: Literal["review", "auto"] = Field(
        default="review",
        description="Tools the server adds after its first listing: review (they wait for a two-person "
        "admission, `colonnade servers admit`) or auto (served at once, and pinned).",
    )
    on_change: Literal["quarantine", "keep"] = Field(
        default="quarantine",
        description="When an admitted tool's definition changes: quarantine (stop serving that tool) or keep"
        " (go on serving the admitted definition); either way the change waits for a two-person approval.",
    )
    poisoning: Literal["block", "approve", "warn"] = Field(
        default="approve",
        description="Tools whose description or schema carries instructions to the model (poisoning checks"
        " TPC001-TPC007): block (never served, cannot be admitted), approve (wait for a two-person admission,"
        " even at first listing) or warn (served; the findings are logged and shown).",
    )

    @model_validator(mode="after")
    def _transport_fields(self) -> McpServerSettings:
        if self.transport == "stdio":
            if not self.command:
                raise ValueError("a stdio server needs `command`")
            if self.url or self.headers or self.auth:
                raise ValueError("`url`, `headers` and `auth` are for http servers; this one is stdio")
        else:
            if not self.url:
                raise ValueError("an http server needs `url` (its Streamable HTTP endpoint)")
            if self.command or self.args or self.env or self.secret_env or self.cwd or self.pin_command:
                raise ValueError(
                    "`command`, `args`, `env`, `secret_env`, `cwd` and `pin_command` are for stdio servers"
                )
        return self


class OrganSettings(_Section):
    """In-process organs served as tools: found by their cards, imported on their first call."""

    cards: list[Path] = Field(
        default_factory=list,
        description="Card folders (organ.json / organ.toml), or folders of them; each organ's functions are"
        " served as tools.",
    )
    tenant: str = Field(
        default="local",
        pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]*$",
        description="Tenant of the organ tools: their names are tenant:organ:function.",
    )
    import_paths: list[Path] = Field(
        default_factory=list,
        description="Folders put on the Python path before an organ's module is imported.",
    )
    pathways: list[Path] = Field(
        default_factory=list,
        description="YAML files of pathways (organ functions in a row), each served as a tool.",
    )


class SharedStateSettings(_Section):
    """What replicas share beyond the database (docs/deploy.md); without `redis_url`, one process."""

    redis_url: str | None = Field(
        default=None,
        description="Redis for state several replicas share (redis://host:port/db); unset: in-process.",
    )
    key_prefix: str = Field(
        default="colonnade",
        min_length=1,
        max_length=64,
        pattern=r"^[A-Za-z0-9_.:-]+$",
        description="Prefix of every Redis key and channel: two gateways on one Redis keep apart by it.",
    )
    op_timeout_s: float = Field(
        default=0.25, gt=0, le=10, description="Longest wait for one Redis operation before degrading."
    )
    probe_interval_s: float = Field(
        default=1.0, gt=0, le=60, description="How often an unreachable Redis is probed for recovery."
    )
    replica_id: str | None = Field(
        default=None,
        max_length=64,
        description="This replica's name in logs, status and fan-out; default: random at start.",
    )


LimitScope = Literal["principal", "agent", "tenant", "tool", "api"]


class LimitRuleSettings(_Section):
    """One rate limit (docs/limits.md): requests per window and/or calls at once, counted per `per`."""

    name: str = Field(
        pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$",
        description="Names the limit in errors, RateLimit headers, metrics and status.",
    )
    per: list[LimitScope] = Field(
        default_factory=list,
        description="What gets its own count: principal, agent, tenant, tool, api, or several "
        "(a list); empty: one count for every call the rule applies to.",
    )
    requests: int | None = Field(
        default=None, ge=1, le=10_000_000, description="Most calls in any window_s (a sliding window)."
    )
    window_s: float = Field(default=60.0, gt=0, le=86_400, description="The window of `requests`, seconds.")
    concurrency: int | None = Field(
        default=None, ge=1, le=100_000, description="Most calls in flight at once."
    )
    tools: list[str] = Field(
        default_factory=lambda: ["*"], description="Canonical tool names (globs) the rule applies to."
    )
    principals: list[str] = Field(
        default_factory=lambda: ["*"],
        description="Callers (globs on kind:id, e.g. agent:invoice-bot, user:*) the rule applies to.",
    )
    tenants: list[str] = Field(
        default_factory=lambda: ["*"], description="Callers' tenants (globs) the rule applies to."
    )

    @model_validator(mode="before")
    @classmethod
    def _one_scope_as_a_list(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("per"), str):
            return {**data, "per": [data["per"]]}
        return data

    @model_validator(mode="after")
    def _limits_something(self) -> LimitRuleSettings:
        if self.requests is None and self.concurrency is None:
            raise ValueError(f"limit {self.name!r} sets neither requests nor concurrency: set one or both")
        return self


class LimitsSettings(_Section):
    """Rate limits and quotas, counted across replicas in Redis (docs/limits.md)."""

    rules: list[LimitRuleSettings] = Field(default_factory=list, description="The limits, each by name.")
    replicas: int | None = Field(
        default=None,
        ge=1,
        le=10_000,
        description="Replicas sharing the limits; while Redis is unreachable each enforces limit/replicas. "
        "Unset: the live replicas last counted in Redis (1 before any count).",
    )
    heartbeat_s: float = Field(
        default=2.0, gt=0, le=60, description="How often a replica tells Redis it is alive (counts replicas)."
    )

    @model_validator(mode="after")
    def _unique_names(self) -> LimitsSettings:
        names = [rule.name for rule in self.rules]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"limit names must be unique; given more than once: {', '.join(twice)}")
        return self


class VaultSettings(_Section):
    """Stored secrets (`colonnade secrets`), the key ring that seals them, and key rotation overlaps."""

    key_ring_file: Path | None = Field(
        default=None,
        description="The sealing key ring as a file (e.g. mounted by a KMS or secret manager); "
        "default data_dir/seal-keys.json, made on first use. Give every replica the same ring.",
    )
    key_ring_env: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
        description="Name of an environment variable holding the sealing key ring (JSON); wins "
        "over key_ring_file.",
    )
    rotation_overlap_s: float = Field(
        default=86_400.0,
        ge=0,
        le=90 * 86_400,
        description="After `colonnade secrets rotate`, how long the previous value still verifies.",
    )
    signing_overlap_s: float = Field(
        default=86_400.0,
        ge=0,
        le=90 * 86_400,
        description="After `colonnade keys rotate-signing`, how long the previous signing key verifies.",
    )
    cache_s: float = Field(
        default=5.0,
        ge=0,
        le=3600,
        description="How long a replica reuses a stored secret it read (a rotation reaches it within this).",
    )


class Settings(_Section):
    """Everything that can be configured, with the embedded defaults."""

    data_dir: Path = Field(default=Path(".colonnade"), description="Where embedded state lives.")
    database_url: str | None = Field(
        default=None,
        description="SQLAlchemy async URL; default is a SQLite file under data_dir.",
    )
    contracts: list[Path] = Field(
        default_factory=list, description="Contract files or folders published at start-up."
    )
    wire_profile: Literal["strict", "mcp"] = Field(
        default="strict", description="Tool names clients see: strict (A-Za-z0-9_-) or mcp (also '.')."
    )
    catalog_poll_s: float = Field(
        default=2.0, gt=0, le=3600, description="How often the catalog picks up publishes from the store."
    )
    idempotency_retention_s: float = Field(
        default=86_400.0, gt=0, description="How long an idempotency key's outcome is replayed."
    )
    health_interval_s: float = Field(default=5.0, gt=0, description="How often backend readiness is probed.")
    manifests_dir: Path | None = Field(
        default=Path("tools"), description="Folder of tools/<tool_id>/tool.yaml manifest overrides."
    )
    log_level: Literal["debug", "info", "warning", "error"] = Field(default="info")
    server: ServerSettings = Field(default_factory=ServerSettings)
    routing: RoutingSettings = Field(default_factory=RoutingSettings)
    local_principal: LocalPrincipalSettings = Field(default_factory=LocalPrincipalSettings)
    auth: AuthSettings = Field(default_factory=AuthSettings)
    audit: AuditSettings = Field(default_factory=AuditSettings)
    approvals: ApprovalSettings = Field(default_factory=ApprovalSettings)
    platform: PlatformSettings = Field(default_factory=PlatformSettings)
    policy: PolicySettings = Field(default_factory=PolicySettings)
    guardrails: GuardrailSettings = Field(default_factory=GuardrailSettings)
    flow: FlowSettings = Field(default_factory=FlowSettings)
    servers: list[McpServerSettings] = Field(
        default_factory=list, description="Downstream MCP servers served behind the gateway."
    )
    organs: OrganSettings = Field(default_factory=OrganSettings)
    telemetry: TelemetrySettings = Field(default_factory=TelemetrySettings)
    shared_state: SharedStateSettings = Field(default_factory=SharedStateSettings)
    limits: LimitsSettings = Field(default_factory=LimitsSettings)
    vault: VaultSettings = Field(default_factory=VaultSettings)
    token_exchange: TokenExchangeSettings | None = Field(
        default=None, description="The authorization server for upstream credentials of mode exchange."
    )

    upstream_oauth: dict[Annotated[str, Field(pattern=r"^[a-z][a-z0-9_-]{0,62}$")], UserOAuthProvider] = (
        Field(
            default_factory=dict,
            description="Authorization servers where each user connects an upstream account (mode"
            " user_oauth), by the name credentials give as `provider`.",
        )
    )

    @model_validator(mode="after")
    def _user_oauth_has_a_provider(self) -> Settings:
        for server in self.servers:
            if (
                isinstance(server.auth, UserOAuthCredential)
                and server.auth.provider not in self.upstream_oauth
            ):
                known = ", ".join(sorted(self.upstream_oauth)) or "none configured"
                raise ValueError(
                    f"server {server.name} uses auth mode user_oauth with provider "
                    f"{server.auth.provider!r}, which `upstream_oauth:` does not define ({known})"
                )
        return self

    @model_validator(mode="after")
    def _exchange_has_a_server(self) -> Settings:
        if self.token_exchange is None:
            exchanging = [s.name for s in self.servers if isinstance(s.auth, ExchangeCredential)]
            if exchanging:
                raise ValueError(
                    f"servers {', '.join(exchanging)} use auth mode exchange, which needs a "
                    "`token_exchange:` section (token_endpoint, client_id, client_secret)"
                )
        return self

    @model_validator(mode="after")
    def _unique_server_names(self) -> Settings:
        names = [server.name for server in self.servers]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"server names must be unique; given more than once: {', '.join(twice)}")
        return self

    @property
    def effective_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite+aiosqlite:///{self.data_dir / 'colonnade.db'}"


def load_settings(
    config_path: str | Path | None = None, environ: Mapping[str, str] | None = None
) -> Settings:
    """Read the YAML file (if any) and apply environment overrides; raise ConfigError on problems."""
    env = dict(os.environ if environ is None else environ)
    explicit = config_path is not None or f"{ENV_PREFIX}CONFIG" in env
    path = Path(config_path or env.get(f"{ENV_PREFIX}CONFIG") or DEFAULT_CONFIG_FILE)
    data: dict[str, Any] = {}
    source = str(path) if path.exists() else "settings"
    if path.exists():
        data = _read_file(path)
    elif explicit:
        raise ConfigError([f"{path}: config file not found (given by --config or COLONNADE_CONFIG)"])
    problems: list[str] = []
    from_env: dict[str, tuple[str, ...]] = {}  # variable name -> the setting path it sets
    otel_origins = _apply_otel_environment(data, env)
    for key, raw in sorted(env.items()):
        name = key[len(ENV_PREFIX) :]
        if not key.startswith(ENV_PREFIX) or name in _NOT_SETTINGS or name.startswith(_SECRET_PREFIX):
            continue
        dotted = name.lower().split("__")
        from_env[key] = tuple(dotted)
        _set_path(data, dotted, _env_value(raw))
    from_env.update(otel_origins)  # after COLONNADE_* ones, which win over them
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        for err in _untagged(exc):
            key = ".".join(str(p) for p in err["loc"])
            origin = _origin(tuple(str(p) for p in err["loc"]), from_env, source)
            problems.append(f"{origin}: {key}: {_expected(err)}")
        raise ConfigError(problems) from None


def _read_file(path: Path) -> dict[str, Any]:
    try:
        loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(path)
        raise ConfigError([f"{where}: invalid YAML: {exc.problem}"]) from None
    except UnicodeDecodeError as exc:
        line, column, byte = not_utf8_position(exc)
        raise ConfigError(
            [
                f"{path}:{line}:{column}: is not UTF-8 text (byte 0x{byte}): save it as UTF-8, "
                f"e.g. `iconv -f latin1 -t utf-8 {path.name} > utf8.yaml`"
            ]
        ) from None
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError([f"{path}: cannot read config: {exc}"]) from None
    if loaded is None:
        return {}
    if not isinstance(loaded, dict):
        raise ConfigError([f"{path}: expected a mapping of settings at the top level"])
    return loaded


def _env_value(raw: str) -> Any:
    """Environment values are strings; JSON lists/objects are accepted for list settings."""
    stripped = raw.strip()
    if stripped.startswith(("[", "{")):
        try:
            return json.loads(stripped)
        except json.JSONDecodeError:
            return raw
    return raw


def _set_path(data: dict[str, Any], keys: list[str], value: Any) -> None:
    node = data
    for key in keys[:-1]:
        child = node.get(key)
        if not isinstance(child, dict):
            child = {}
            node[key] = child
        node = child
    node[keys[-1]] = value


def _origin(loc: tuple[str, ...], from_env: Mapping[str, tuple[str, ...]], source: str) -> str:
    """The variable that set the setting at `loc` or something below it (`COLONNADE_SERVR__PORT` for
    the unknown `servr`), else the config file."""
    for name, path in from_env.items() if loc else ():
        if path[: len(loc)] == loc or loc[: len(path)] == path:
            return f"environment {name}"
    return source


# The OpenTelemetry SDK's standard variables and the telemetry settings they set (milliseconds become
# seconds, `key=value,...` lists become maps); COLONNADE_TELEMETRY__* variables still win over them.
_OTEL_VARIABLES = {
    "OTEL_EXPORTER_OTLP_ENDPOINT": "telemetry.otlp_endpoint",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "telemetry.otlp_traces_endpoint",
    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "telemetry.otlp_metrics_endpoint",
    "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "telemetry.otlp_logs_endpoint",
    "OTEL_EXPORTER_OTLP_PROTOCOL": "telemetry.otlp_protocol",
    "OTEL_EXPORTER_OTLP_HEADERS": "telemetry.otlp_headers",
    "OTEL_EXPORTER_OTLP_TIMEOUT": "telemetry.otlp_timeout_s",
    "OTEL_SERVICE_NAME": "telemetry.service_name",
    "OTEL_RESOURCE_ATTRIBUTES": "telemetry.resource_attributes",
    "OTEL_TRACES_EXPORTER": "telemetry.traces",
    "OTEL_METRICS_EXPORTER": "telemetry.metrics",
    "OTEL_LOGS_EXPORTER": "telemetry.events_otlp",
    "OTEL_TRACES_SAMPLER": "telemetry.traces_sampler",
    "OTEL_TRACES_SAMPLER_ARG": "telemetry.traces_sampler_arg",
    "OTEL_BSP_MAX_QUEUE_SIZE": "telemetry.max_queue_size",
    "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "telemetry.max_export_batch_size",
    "OTEL_BSP_SCHEDULE_DELAY": "telemetry.schedule_delay_s",
    "OTEL_METRIC_EXPORT_INTERVAL": "telemetry.metrics_interval_s",
}
_OTEL_MILLISECONDS = {"OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_BSP_SCHEDULE_DELAY", "OTEL_METRIC_EXPORT_INTERVAL"}
_OTEL_LISTS = {"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_RESOURCE_ATTRIBUTES"}
_OTEL_EXPORTERS = {"OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER", "OTEL_LOGS_EXPORTER"}


def _apply_otel_environment(data: dict[str, Any], env: Mapping[str, str]) -> dict[str, tuple[str, ...]]:
    """The standard OTEL_* variables over the file's `telemetry:` keys; OTEL_SDK_DISABLED turns export off.

    Returns which variable set which setting, so a bad value is blamed on its variable.
    """
    origins: dict[str, tuple[str, ...]] = {}
    for name, key in _OTEL_VARIABLES.items():
        raw = env.get(name, "").strip()
        if raw:
            _set_path(data, key.split("."), _otel_value(name, raw))
            origins[name] = tuple(key.split("."))
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        _set_path(data, ["telemetry", "traces"], False)
        _set_path(data, ["telemetry", "metrics"], False)
        _set_path(data, ["telemetry", "events_otlp"], False)
        origins["OTEL_SDK_DISABLED"] = ("telemetry",)
    return origins


def _otel_value(name: str, raw: str) -> Any:
    if name in _OTEL_LISTS:
        pairs = (item.partition("=") for item in raw.split(",") if item.strip())
        return {unquote(k).strip(): unquote(v).strip() for k, _, v in pairs}
    if name in _OTEL_EXPORTERS:
        return raw.lower() != "none" if raw.lower() in ("none", "otlp") else raw
    if name in _OTEL_MILLISECONDS:
        try:
            return float(raw) / 1000
        except ValueError:
            return raw
    return raw


def server_definition_problems(exc: ValidationError) -> list[str]:
    """The problems of one `servers:` entry sent on its own (REST), worded as for colonnade.yaml."""
    problems: list[str] = []
    for err in _untagged(exc):
        where = ".".join(map(str, err["loc"])) or "(body)"
        if err["type"] == "json_invalid":
            problems.append(f"{where}: {err['msg']}")
        else:
            problems.append(f"{where}: {_expected({**err, 'loc': ('servers', 0, *err['loc'])})}")
    return problems


_CREDENTIAL_MODES = frozenset({"static", "forward", "exchange"})


def _untagged(exc: ValidationError) -> list[Any]:
    """The errors with the credential mode pydantic puts after `auth` left out of each location,
    so a problem reads `servers.1.auth.secret`, as written in the file."""
    errors: list[Any] = []
    for err in exc.errors():
        loc = err["loc"]
        kept = [p for i, p in enumerate(loc) if not (i and loc[i - 1] == "auth" and p in _CREDENTIAL_MODES)]
        errors.append({**err, "loc": tuple(kept)})
    return errors


def _expected(err: Any) -> str:
    if err["type"] == "extra_forbidden":
        near = difflib.get_close_matches(str(err["loc"][-1]), _settings_at(err["loc"][:-1]), n=1, cutoff=0.6)
        hint = f"did you mean {near[0]!r}? " if near else ""
        page = "docs/servers.md" if err["loc"][0] == "servers" else "docs/configuration.md"
        return f"unknown setting ({hint}check the spelling; see {page})"
    message = str(err["msg"])
    return f"{message} (got {err['input']!r})" if "input" in err and err["type"] != "missing" else message


def _settings_at(loc: Sequence[int | str]) -> list[str]:
    """The setting names of the section at `loc` (e.g. ("server",)), for a typo's suggestion."""
    model: type[BaseModel] = Settings
    keyed = False  # the section is a map (`tools.<name>`): the next part is a key, not a setting
    for part in loc:
        if isinstance(part, int) or keyed:
            keyed = False
            continue
        field = model.model_fields.get(str(part))
        section = _section_model(field.annotation) if field is not None else None
        if field is None or section is None:
            return []
        model, keyed = section, get_origin(field.annotation) is dict
    return list(model.model_fields)


def _section_model(annotation: Any) -> type[BaseModel] | None:
    """The model inside an annotation (`X`, `X | None`, `list[X]`, `dict[str, X]`), if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for inner in reversed(get_args(annotation)):
        found = _section_model(inner)
        if found is not None:
            return found
    return None
