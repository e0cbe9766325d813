"""`AsyncColonnade`: one call as the tool-call contract asks an agent to make it.

`call()` sends the envelope with a derived idempotency key and the deadline, and then acts on the
typed outcome: `retryable_error` is sent again (same call id, same key, so the gateway replays what
already ran) after the delay `Backoff` allows; `pending` awaiting approval is waited for and
resumed; `success` is checked against the tool's output schema; everything else is returned as it
came, because the gateway typed it. `prepare()`, `commit()` and `discard()` are the two-phase road.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from dataclasses import dataclass
from typing import Any, Literal

from jsonschema import Draft202012Validator

from colonnade.calls.envelope import (
    CallConstraints,
    CallContext,
    CallRequest,
    CallResult,
    CallStatus,
    RetryPolicy,
)
from colonnade.client.backoff import Backoff
from colonnade.client.client_errors import ApprovalNotGranted, ClientError, OutputSchemaMismatch
from colonnade.client.keys import idempotency_key
from colonnade.client.transport import Transport

__all__ = ["AsyncColonnade", "CallOptions"]

logger = logging.getLogger("colonnade.client")

KeyChoice = str | Literal["auto"] | None
SKIP_TOOL = "colonnade__record_skip"


@dataclass(frozen=True, slots=True)
class CallOptions:
    """How one call is made. `key="auto"` derives the idempotency key from the call; None sends none."""

    key: KeyChoice = "auto"
    timeout_ms: int | None = None
    version: str | None = None
    fn: str | None = None
    validate_output: bool = True
    approval: Literal["wait", "return"] = "wait"
    approval_timeout_s: float = 300.0
    poll_s: float = 1.0
    trace_id: str | None = None
    retry_policy: RetryPolicy | None = None
    """The gateway's own retries within the deadline (pure and idempotent tools); these come on top."""


class AsyncColonnade:
    """`async with AsyncColonnade(RestTransport(url, token=...)) as agent: await agent.call(...)`."""

    def __init__(self, transport: Transport, *, backoff: Backoff | None = None) -> None:
        self.transport = transport
        self.backoff = backoff if backoff is not None else Backoff()
        self._schemas: dict[str, Draft202012Validator | None] = {}

    async def __aenter__(self) -> AsyncColonnade:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self.transport.aclose()

    async def call(
        self, tool: str, input: dict[str, Any] | None = None, options: CallOptions | None = None
    ) -> CallResult:
        """Call `tool` with `input`; the final outcome after retries, approval and output checks."""
        options = options if options is not None else CallOptions()
        request = self.request(tool, input or {}, options)
        started = time.monotonic()
        attempt = 0
        while True:
            attempt += 1
            result = await self.transport.call(request)
            self._log(request, result, attempt)
            if result.status is CallStatus.PENDING and options.approval == "wait":
                result = await self._approved(result, request, options)
            if result.status is not CallStatus.RETRYABLE_ERROR:
                break
            retry_after = result.error.details.get("retry_after_ms") if result.error is not None else None
            delay = self.backoff.delay(
                attempt, float(retry_after) if isinstance(retry_after, int | float) else None
            )
            if not self.backoff.allows(attempt, time.monotonic() - started, delay):
                break
            await asyncio.sleep(delay)
        if result.status is CallStatus.SUCCESS and options.validate_output and request.dry_run is False:
            await self._check_output(tool, result)
        return result

    async def prepare(
        self, tool: str, input: dict[str, Any] | None = None, options: CallOptions | None = None
    ) -> CallResult:
        """Phase 1 of a two-phase tool: `success_prep` with a `commit_token`, or what stopped it."""
        return await self.call(tool, input, options)

    async def commit(self, prepared: CallResult | str) -> CallResult:
        """Phase 2: make the prepared call final (only its preparer may)."""
        return await self.transport.commit(_token_of(prepared), call_id=f"commit-{uuid.uuid4()}")

    async def discard(self, prepared: CallResult | str) -> CallResult:
        """Give the prepared call up: its compensation runs now, and the token can no longer commit."""
        return await self.transport.discard(_token_of(prepared), call_id=f"discard-{uuid.uuid4()}")

    async def skip(
        self, tool: str, reason: str, *, call_id: str | None = None, trace_id: str | None = None
    ) -> CallResult:
        """Record in the audit chain that a step calling `tool` was skipped on purpose, and why."""
        record: dict[str, Any] = {"tool_id": tool, "reason": reason}
        record.update({k: v for k, v in (("call_id", call_id), ("trace_id", trace_id)) if v})
        return await self.call(SKIP_TOOL, record, CallOptions(key=None, validate_output=False))

    def request(self, tool: str, input: dict[str, Any], options: CallOptions) -> CallRequest:
        """The envelope `call()` sends (public so that an agent can log or store it first)."""
        key = options.key
        if key == "auto":
            key = idempotency_key(tool, input, fn=options.fn, version=options.version)
        context = CallContext(trace_id=options.trace_id) if options.trace_id else CallContext()
        return CallRequest(
            tool_id=tool,
            tool_version=options.version,
            fn=options.fn,
            input=input,
            context=context,
            constraints=CallConstraints(
                timeout_ms=options.timeout_ms, idempotency_key=key, retry_policy=options.retry_policy
            ),
        )

    async def wait_for_approval(self, pending: CallResult, options: CallOptions | None = None) -> CallResult:
        """Poll the approval of a parked call until it is decided; resume it once approved."""
        options = options if options is not None else CallOptions()
        if pending.pending is None or pending.pending.reason != "awaiting_approval":
            raise ClientError(f"call {pending.call_id} is not awaiting approval")
        approval_id = pending.pending.token
        deadline = time.monotonic() + options.approval_timeout_s
        while True:
            record = await self.transport.approval(approval_id)
            state = str(record.get("state"))
            if state == "approved":
                return await self.transport.resume(approval_id, call_id=pending.call_id)
            if state in ("denied", "expired", "used"):
                raise ApprovalNotGranted(approval_id, state, record.get("comment"))
            if time.monotonic() + options.poll_s > deadline:
                raise ApprovalNotGranted(
                    approval_id, f"{state} after {options.approval_timeout_s:.0f} s of waiting"
                )
            await asyncio.sleep(options.poll_s)

    async def _approved(self, result: CallResult, request: CallRequest, options: CallOptions) -> CallResult:
        if result.pending is None or result.pending.reason != "awaiting_approval":
            return result  # awaiting the user's input: the agent's own dialogue, not the client's
        logger.info(
            "call %s waits for approval %s",
            request.call_id,
            result.pending.token,
            extra={"trace_id": request.context.trace_id, "tool": request.tool_id},
        )
        return await self.wait_for_approval(result, options)

    async def _check_output(self, tool: str, result: CallResult) -> None:
        validator = await self._validator(tool)
        if validator is None:
            return
        violations = [
            f"{'/'.join(map(str, error.absolute_path)) or '(root)'}: {error.message}"
            for error in validator.iter_errors(result.output)
        ]
        if violations:
            raise OutputSchemaMismatch(tool, violations, result.output)

    async def _validator(self, tool: str) -> Draft202012Validator | None:
        if tool not in self._schemas:
            definition = await self.transport.tool(tool)
            schema = definition.get("output_schema")
            self._schemas[tool] = (
                Draft202012Validator(schema) if isinstance(schema, dict) and schema else None
            )
        return self._schemas[tool]

    def _log(self, request: CallRequest, result: CallResult, attempt: int) -> None:
        code = result.error.code if result.error is not None else None
        logger.info(
            "call %s attempt %d: %s%s",
            request.call_id,
            attempt,
            result.status.value,
            f" {code}" if code else "",
            extra={
                "trace_id": request.context.trace_id,
                "tool": request.tool_id,
                "attempt": attempt,
                "code": code,
            },
        )


def _token_of(prepared: CallResult | str) -> str:
    if isinstance(prepared, str):
        return prepared
    if prepared.commit_token is None:
        raise ClientError(f"call {prepared.call_id} has no commit token (status {prepared.status.value})")
    return prepared.commit_token
