"""The Universal API Contract (UAC): one API of one tenant, its backend and its endpoints.

The pydantic models are the single source of truth: the published JSON Schema
(`schemas/uac.schema.json`) is generated from them, and the validator checks raw
documents against that schema before any semantic rule runs.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag

from colonnade.config import (
    ExchangeCredential,
    ForwardCredential,
    SecretReference,
    UserOAuthCredential,
    credential_mode,
)

__all__ = [
    "HTTP_METHODS",
    "Backend",
    "BackendAuth",
    "BackendCredential",
    "BodyMediaType",
    "Classification",
    "Contract",
    "ContractStatus",
    "Deprecation",
    "Determinism",
    "Endpoint",
    "Environment",
    "LlmBlock",
    "LlmExample",
    "Operation",
    "RateLimitSpec",
    "RuntimeSpec",
    "SideEffects",
    "TwoPhase",
    "derive_input_schema",
    "path_parameters",
]

KEBAB = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
SEMVER = (
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$"
)
OPERATION_ID = r"^[A-Za-z_][A-Za-z0-9_]*$"
SECRET_NAME = r"^[A-Za-z_][A-Za-z0-9_.-]*$"
BASE_URL = r"^https?://[^\s/]+"
HTTP_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")
_PATH_PARAM = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


class SideEffects(StrEnum):
    """What calling an operation does to the world; drives annotations, gating and retries."""

    NONE = "none"
    READ = "read"
    WRITE = "write"
    DESTRUCTIVE = "destructive"


class Determinism(StrEnum):
    """Whether repeating a call is safe: drives retries and idempotency handling."""

    PURE = "pure"
    IDEMPOTENT = "idempotent"
    SIDE_EFFECTFUL = "side_effectful"


class ContractStatus(StrEnum):
    DRAFT = "draft"
    PUBLISHED = "published"
    DEPRECATED = "deprecated"


class Environment(StrEnum):
    """Where an API's backend runs; developers may call write tools of non-production APIs only."""

    DEV = "dev"
    STAGING = "staging"
    PROD = "prod"


class Classification(StrEnum):
    PUBLIC = "public"
    INTERNAL = "internal"
    CONFIDENTIAL = "confidential"
    RESTRICTED = "restricted"


class HttpMethod(StrEnum):
    GET = "GET"
    POST = "POST"
    PUT = "PUT"
    PATCH = "PATCH"
    DELETE = "DELETE"
    HEAD = "HEAD"
    OPTIONS = "OPTIONS"


class AuthType(StrEnum):
    BEARER = "bearer"
    API_KEY_HEADER = "api_key_header"
    BASIC = "basic"


class BodyMediaType(StrEnum):
    """How an endpoint's body arguments travel: one JSON object, form fields, or multipart parts."""

    JSON = "application/json"
    FORM = "application/x-www-form-urlencoded"
    MULTIPART = "multipart/form-data"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_enum_values=False)


class LlmExample(_Strict):
    """One synthetic call: an input and what the result must contain."""

    input: dict[str, Any] = Field(description="Arguments for the tool; synthetic data only.")
    expected_output_contains: str | dict[str, Any] = Field(
        description=(
            "What the result must contain when this example is run: an object lists fields the result "
            "must have with these values (recursively: nested objects are subsets too, each listed array "
            "item must match an item of the result's array); a string is a substring of the JSON result."
        )
    )

    def expected_text(self) -> str:
        """`expected_output_contains` as one line of text, for people (pages, reports)."""
        expected = self.expected_output_contains
        if isinstance(expected, str):
            return expected
        return json.dumps(expected, ensure_ascii=False, separators=(", ", ": "))


GuardAction = Literal["block", "redact", "approve", "audit", "off"]
GuardKind = Literal["payment_card", "national_id", "email", "phone", "secret", "prompt_injection"]
FlowLabel = Literal["reads_private", "ingests_untrusted", "egress"]


class LlmGuardrails(_Strict):
    """This operation's guardrail actions; they win over colonnade.yaml's for its tool."""

    arguments: dict[GuardKind, GuardAction] = Field(
        default_factory=dict, description="kind -> block | redact | approve | audit | off, on arguments."
    )
    results: dict[GuardKind, GuardAction] = Field(
        default_factory=dict, description="kind -> block | redact | approve | audit | off, on results."
    )


class LlmBlock(_Strict):
    """What an agent (and the gateway's governance) needs to know about one operation."""

    summary: str = Field(description="What the operation does; target <= 160 characters.")
    intent: str = Field(description="When an agent should use it; target <= 360 characters.")
    tool_name: str = Field(
        description="Stable tool name, unique in the tenant/API namespace: 1-64 chars of A-Za-z0-9_.-"
    )
    side_effects: SideEffects = Field(description="none | read | write | destructive")
    safe_for_agents: bool = Field(description="May an autonomous agent call it under normal policy.")
    requires_human_approval: bool = Field(description="Must a human approve each call before execution.")
    examples: list[LlmExample] = Field(
        description="One or two synthetic examples {input, expected_output_contains}."
    )
    flow_labels: list[FlowLabel] = Field(
        default_factory=list,
        description="What the operation does with information: reads_private (returns private data), "
        "ingests_untrusted (returns text from outside), egress (sends data out). See docs/governance.md.",
    )
    guardrails: LlmGuardrails | None = Field(
        default=None, description='Guardrail actions for this operation (docs/governance.md "Guardrails").'
    )


class TwoPhase(_Strict):
    """Two-phase commit: the operation itself prepares; these operations confirm or undo it."""

    commit_operation: str = Field(
        pattern=OPERATION_ID, description="operation_id called with the prepared result to finalize."
    )
    compensate_operation: str = Field(
        pattern=OPERATION_ID, description="operation_id called to undo a prepared call never committed."
    )
    window_ms: int = Field(
        default=60_000, ge=100, le=86_400_000, description="How long a commit token stays valid."
    )


class RateLimitSpec(_Strict):
    """A rate limit of one operation's tool, counted across the gateway's replicas (docs/limits.md)."""

    requests: int = Field(ge=1, le=10_000_000, description="Most calls of the tool in any window_s.")
    window_s: float = Field(default=60.0, gt=0, le=86_400, description="The sliding window, in seconds.")
    per: list[Literal["principal", "agent", "tenant"]] = Field(
        default_factory=list,
        description="Count each caller (principal), agent or tenant apart; empty: all callers together.",
    )


class RuntimeSpec(_Strict):
    """Per-operation limits and guarantees; every field overrides what the gateway derives."""

    determinism: Determinism | None = Field(
        default=None, description="pure | idempotent | side_effectful; default from side_effects + method."
    )
    timeout_ms_default: int | None = Field(default=None, ge=1, le=600_000, description="Timeout of a call.")
    timeout_ms_max: int | None = Field(default=None, ge=1, le=600_000, description="Largest timeout allowed.")
    concurrency_max: int | None = Field(default=None, ge=1, le=100_000, description="Most calls in flight.")
    rate_limits: list[RateLimitSpec] = Field(
        default_factory=list,
        # Left out of dumps when empty, so that the digests of tools without one did not change.
        exclude_if=lambda limits: not limits,
        description="Rate limits of the tool: at most `requests` calls per sliding `window_s`.",
    )
    two_phase: TwoPhase | None = Field(default=None, description="Opt in to two-phase commit.")
    deduplicates_idempotency_key: bool = Field(
        default=False,
        description="The backend runs a request at most once per Idempotency-Key header (as payment APIs "
        "do), so a call whose earlier attempt was interrupted may be sent again with the same key.",
    )


class BackendAuth(_Strict):
    """How the gateway authenticates to the backend; `secret` names a secret, it never holds one."""

    mode: Literal["static"] = Field(default="static", description="static: the gateway's one secret.")
    type: AuthType = Field(description="bearer | api_key_header | basic")
    secret: SecretReference = Field(
        description="The secret: its name (an env variable's), or env:NAME, store:NAME, file:/path."
    )
    header: str | None = Field(default=None, description="Header name for api_key_header auth.")


BackendCredential = Annotated[
    Annotated[BackendAuth, Tag("static")]
    | Annotated[ForwardCredential, Tag("forward")]
    | Annotated[ExchangeCredential, Tag("exchange")]
    | Annotated[UserOAuthCredential, Tag("user_oauth")],
    Discriminator(
        credential_mode,
        custom_error_type="credential_mode",
        custom_error_message="backend.auth.mode must be static, forward, exchange or user_oauth",
    ),
]
"""What a contract says about its backend's credential; the modes other than static are the
operator's settings models (`colonnade.config`), shared with colonnade.yaml's `servers:`."""


class Backend(_Strict):
    base_url: str = Field(pattern=BASE_URL, description="Base URL of the HTTP backend.")
    auth: BackendCredential | None = Field(
        default=None,
        description="The backend credential by mode: static (a secret's name, the default), forward "
        "(the caller's token, when issued for `audience`), exchange (RFC 8693, for `audience`) or "
        "user_oauth (each user's own grant at `provider`, an `upstream_oauth:` entry).",
    )
    timeout_ms: int | None = Field(default=None, ge=1, le=600_000, description="Default per-call timeout.")
    health_path: str | None = Field(
        default=None, pattern=r"^/", description="Readiness path probed by the gateway (e.g. /healthz)."
    )


class Endpoint(_Strict):
    path: str = Field(pattern=r"^/", description="URL path below base_url; {param} marks path parameters.")
    methods: list[HttpMethod] = Field(min_length=1, description="HTTP methods served at this path.")
    backend_url: str | None = Field(
        default=None,
        pattern=BASE_URL,
        description=(
            "Base URL of this endpoint's backend, in place of backend.base_url (the path is appended "
            "to it the same way); auth and timeout still come from `backend`."
        ),
    )
    operation_id: str = Field(pattern=OPERATION_ID, description="Identifier of the operation in the API.")
    description: str | None = Field(default=None, description="Longer human description.")
    tags: list[str] = Field(default_factory=list, description="Free-form tags (domains, features).")
    input_schema: dict[str, Any] | None = Field(
        default=None,
        description="JSON Schema 2020-12 of the arguments; derived from path parameters when absent.",
    )
    output_schema: dict[str, Any] | None = Field(default=None, description="JSON Schema of the result.")
    body_media_type: BodyMediaType | None = Field(
        default=None,
        description=(
            "How body arguments are sent: application/json (the default: one JSON object), "
            "application/x-www-form-urlencoded (form fields; objects as name[key], arrays repeated) or "
            "multipart/form-data (one part per field; a string with contentEncoding: base64 is sent as "
            "a file of its decoded bytes, an object as a JSON part)."
        ),
    )
    mcp: bool = Field(default=True, description="Expose this endpoint as an MCP tool.")
    llm: LlmBlock | None = Field(default=None, description="Agent-facing metadata for the operation.")
    runtime: RuntimeSpec | None = Field(default=None, description="Limits and guarantees for calls.")

    def effective_input_schema(self) -> dict[str, Any]:
        return self.input_schema if self.input_schema is not None else derive_input_schema(self.path)

    @property
    def effective_body_media_type(self) -> BodyMediaType:
        return self.body_media_type or BodyMediaType.JSON


class Deprecation(_Strict):
    """When a version stopped being recommended, when it stops answering, and what replaces it.

    Lifecycle state like `status`: `colonnade contract deprecate --sunset --successor` sets it on a
    published version without changing the version's content (or its spec hash)."""

    deprecated_at: datetime | None = Field(default=None, description="When the version was deprecated.")
    sunset_at: datetime | None = Field(
        default=None,
        description="From this moment calls pinned to the version are refused with C-CONTRACT-SUNSET.",
    )
    successor: str | None = Field(
        default=None, pattern=SEMVER, description="The version of the same API callers should move to."
    )

    def notice(self, label: str) -> str:
        """One line for a caller: what is deprecated, until when, and where to go."""
        parts = [f"{label} is deprecated"]
        if self.sunset_at is not None:
            parts.append(f"it stops answering at its sunset, {self.sunset_at.isoformat()}")
        if self.successor is not None:
            parts.append(f"move to version {self.successor} (tool_version '^{self.successor.split('.')[0]}')")
        return "; ".join(parts)


class Contract(_Strict):
    """One API of one tenant at one version."""

    name: str = Field(pattern=KEBAB, description="API name, kebab-case.")
    version: str = Field(pattern=SEMVER, description="Semantic version of this contract.")
    tenant: str = Field(pattern=KEBAB, description="Owning tenant, kebab-case.")
    display_name: str = Field(min_length=1, description="Human-readable API name.")
    description: str = Field(description="What the API is for.")
    status: ContractStatus = Field(description="draft | published | deprecated")
    owner: str | None = Field(default=None, description="Team or person accountable for the API.")
    classification: Classification | None = Field(
        default=None, description="Data classification: public | internal | confidential | restricted."
    )
    needs_review: list[str] | None = Field(
        default=None,
        description=(
            "What a person must still check or do before this draft is published (the OpenAPI import "
            "writes it); remove each item once done."
        ),
    )
    environment: Environment | None = Field(
        default=None,
        description="Where the backend runs: dev | staging | prod; absent counts as prod for governance.",
    )
    deprecation: Deprecation | None = Field(
        default=None,
        description="Set on a deprecated version: deprecated_at, sunset_at and successor (change control).",
    )
    backend: Backend
    endpoints: list[Endpoint] = Field(description="The operations of this API.")

    def operations(self) -> list[Operation]:
        """Every (endpoint, method) pair, in document order: each becomes one tool."""
        ops: list[Operation] = []
        for index, endpoint in enumerate(self.endpoints):
            multi = len(endpoint.methods) > 1
            for method in endpoint.methods:
                ops.append(Operation(self, endpoint, index, method.value, multi))
        return ops


class Operation:
    """One endpoint + method of a contract; the unit projected into a tool."""

    __slots__ = ("_multi", "contract", "endpoint", "index", "method")

    def __init__(self, contract: Contract, endpoint: Endpoint, index: int, method: str, multi: bool) -> None:
        self.contract = contract
        self.endpoint = endpoint
        self.index = index
        self.method = method
        self._multi = multi

    @property
    def name(self) -> str:
        """operation_id, suffixed with the method when one endpoint serves several methods."""
        oid = self.endpoint.operation_id
        return f"{oid}_{self.method.lower()}" if self._multi else oid

    @property
    def tool_name(self) -> str:
        """The operation segment of the canonical name: `llm.tool_name` when present, else the name."""
        llm = self.endpoint.llm
        if llm is None:
            return self.name
        return f"{llm.tool_name}_{self.method.lower()}" if self._multi else llm.tool_name

    @property
    def canonical_name(self) -> str:
        """`{tenant}:{api}:{tool_name}`: what audit, metrics, policies and smoke assertions use."""
        return f"{self.contract.tenant}:{self.contract.name}:{self.tool_name}"

    @property
    def pointer(self) -> str:
        return f"/endpoints/{self.index}"

    def __repr__(self) -> str:
        return f"Operation({self.method} {self.endpoint.path} -> {self.canonical_name})"


def path_parameters(path: str) -> list[str]:
    return _PATH_PARAM.findall(path)


def derive_input_schema(path: str) -> dict[str, Any]:
    """One required string property per `{param}` of the path."""
    params = path_parameters(path)
    return {
        "type": "object",
        "properties": {p: {"type": "string"} for p in params},
        "required": params,
        "additionalProperties": False,
    }
