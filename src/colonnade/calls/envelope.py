"""The envelopes of the tool-call contract: what a caller asks (CallRequest) and gets (CallResult).

Every surface (MCP, REST, CLI) translates its protocol into a CallRequest and renders the
CallResult back; the status of a result is definitive (never partial success with an error).
`pending` means nothing ran yet: the call is parked (awaiting an approval or the user's input)
and `pending` says what the caller must do next. Results carry `envelope_version`, so a client
can tell this shape (version 2, which added `success_prep` and `pending`) from version 1, the four
outcomes only, which `calls/envelope_v1.py` projects this one into. A caller picks the version of its
answers with the request's `envelope_version`, the `Colonnade-Envelope-Version` header (REST) or
`_meta["colonnade/envelope_version"]` (MCP).
"""

from __future__ import annotations

import uuid
from datetime import datetime
from enum import StrEnum
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from colonnade.calls.handover import NOTHING_HANDED_OVER, Handover

__all__ = [
    "APPROVAL_TOKEN_META_KEY",
    "DRY_RUN_META_KEY",
    "ENVELOPE_VERSION",
    "ENVELOPE_VERSIONS",
    "ENVELOPE_VERSION_HEADER",
    "ENVELOPE_VERSION_META_KEY",
    "REQUEST_META_KEY",
    "RESULT_META_KEY",
    "CallConstraints",
    "CallContext",
    "CallError",
    "CallMetrics",
    "CallRequest",
    "CallResult",
    "CallStatus",
    "EnvelopeVersion",
    "Pending",
    "Provenance",
    "RetryPolicy",
    "hand_over",
]


# Over MCP, envelope fields ride in a tools/call's `_meta` under these keys (clients and smoke use them).
DRY_RUN_META_KEY = "colonnade/dry_run"
APPROVAL_TOKEN_META_KEY = "colonnade/approval_token"
REQUEST_META_KEY = "colonnade/request"
RESULT_META_KEY = "colonnade/result"
"""Where an MCP tool result carries the call's whole CallResult envelope."""
ENVELOPE_VERSION: Final = 2
"""The version of the CallResult model below; version 1 is its projection (`calls/envelope_v1.py`)."""
ENVELOPE_VERSIONS: Final = (1, 2)
ENVELOPE_VERSION_HEADER = "Colonnade-Envelope-Version"
"""A REST request may choose its answer's envelope version in this header instead of the body's field."""
ENVELOPE_VERSION_META_KEY = "colonnade/envelope_version"
"""An MCP tools/call may choose the envelope version of `_meta["colonnade/result"]` here."""

EnvelopeVersion = Literal[1, 2]


class CallStatus(StrEnum):
    SUCCESS = "success"
    SUCCESS_PREP = "success_prep"
    PENDING = "pending"
    RETRYABLE_ERROR = "retryable_error"
    TERMINAL_ERROR = "terminal_error"
    INVALID_REQUEST = "invalid_request"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RetryPolicy(_Model):
    max_attempts: int = Field(default=1, ge=1, le=10)
    base_ms: int = Field(default=100, ge=0, le=60_000)
    cap_ms: int = Field(default=2_000, ge=0, le=600_000)
    jitter: Literal["none", "full"] = "full"


class CallContext(_Model):
    actor_id: str | None = None
    scopes: list[str] = Field(default_factory=list)
    trace_id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    parent_span_id: str | None = None
    trace_flags: int | None = Field(
        default=None, ge=0, le=255, description="W3C trace flags of the parent span (1: sampled)."
    )
    tracestate: str | None = Field(default=None, max_length=512, description="The caller's W3C tracestate.")
    locale: str | None = None
    timezone: str | None = None
    clock: str | None = None
    env: str | None = None


class CallConstraints(_Model):
    timeout_ms: int | None = Field(default=None, ge=1, le=600_000)
    deadline_unix_ms: int | None = Field(default=None, ge=0)
    idempotency_key: str | None = Field(default=None, min_length=1, max_length=256)
    memory_mb_limit: int | None = Field(default=None, ge=1)
    net_allowlist: list[str] | None = None
    retry_policy: RetryPolicy | None = None


class CallRequest(_Model):
    """One call of one tool; `tool_id` is a canonical or wire name, or an unambiguous bare tool name."""

    call_id: str = Field(default_factory=lambda: str(uuid.uuid4()))
    tool_id: str = Field(min_length=1, max_length=512)
    tool_version: str | None = None
    fn: str | None = None
    input: dict[str, Any] = Field(default_factory=dict)
    context: CallContext = Field(default_factory=CallContext)
    constraints: CallConstraints = Field(default_factory=CallConstraints)
    provenance: dict[str, Any] | None = None
    dry_run: bool = False
    approval_token: str | None = Field(
        default=None,
        max_length=8192,
        description="The signed token of an approval of exactly this call (tool, arguments, caller).",
    )
    attestation: str | None = Field(
        default=None,
        max_length=16_384,
        description="A compact JWS by the calling agent's key over this call, for tools a policy "
        "marks sensitive (docs/policy.md).",
    )
    envelope_version: EnvelopeVersion | None = Field(
        default=None,
        description="The envelope version of the answer: 1 (four outcomes, what REST answers by "
        "default) or 2 (adds success_prep and pending, what MCP answers by default).",
    )


class CallError(_Model):
    code: str
    message: str
    details: dict[str, Any] = Field(default_factory=dict)
    fix: str


class CallMetrics(_Model):
    """Always present; a value the gateway cannot measure for the tool's adapter is null, never made up.

    An HTTP backend's CPU and memory are the backend's own; in-process adapters (organs) report them.
    """

    duration_ms: float = Field(default=0.0, description="Wall time from resolution to outcome.")
    cpu_ms: float | None = Field(
        default=None, description="CPU time of the tool, when the adapter measures it."
    )
    memory_peak_mb: float | None = Field(
        default=None, description="Peak memory of the tool, when the adapter measures it."
    )


class Provenance(_Model):
    # One per tool version, shared by its calls' results (hence frozen). No docstring: it would
    # become the published schema's description.
    model_config = ConfigDict(extra="forbid", frozen=True)

    tool_id: str
    tool_version: str
    digest: str


class Pending(_Model):
    """A parked call: why it waits, the single-use token that resumes it, until when, and what to do."""

    reason: Literal["awaiting_approval", "awaiting_input"]
    token: str
    expires_at: datetime
    next_action: str = Field(description="What the caller must do next, in plain words.")


class CallResult(_Model):
    envelope_version: Literal[2] = ENVELOPE_VERSION
    call_id: str
    status: CallStatus
    output: Any = None
    error: CallError | None = None
    side_effects: list[str] = Field(default_factory=list)
    metrics: CallMetrics = Field(default_factory=CallMetrics)
    provenance: Provenance | None = None
    warnings: list[str] = Field(default_factory=list)
    commit_token: str | None = None
    pending: Pending | None = None

    @property
    def ok(self) -> bool:
        return self.status in (CallStatus.SUCCESS, CallStatus.SUCCESS_PREP)

    @property
    def handover(self) -> Handover:
        """What the pipeline hands the surface beside the envelope (`calls/handover.py`); never serialised."""
        private = self.__pydantic_private__
        return private.get(_HANDOVER, NOTHING_HANDED_OVER) if private else NOTHING_HANDED_OVER

    def handing_over(self, handover: Handover) -> CallResult:
        """This result with `handover` (a copy: a result may be shared, e.g. a stored replay)."""
        copy = self.model_copy()
        hand_over(copy, handover)
        return copy


_HANDOVER = "handover"


def hand_over(fresh: CallResult, handover: Handover) -> None:
    """Give a result just built (nobody else holds it yet) its handover.

    It rides in pydantic's per-instance private values, which copies keep and dumps, schemas and
    validation never see; declaring it as a `PrivateAttr` instead would cost every result an
    initialisation hook, for a value most results never carry."""
    object.__setattr__(fresh, "__pydantic_private__", {_HANDOVER: handover})
