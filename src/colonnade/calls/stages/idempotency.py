"""Idempotency: one execution per idempotency key (scoped to tenant + tool + actor).

While a call with a key is in flight, duplicates wait for it and return its outcome; afterwards the
stored outcome is replayed. Outcomes live in the database, so replays survive a restart and are
shared by replicas. The same key with different input is refused, never silently replayed.
A retryable outcome is not stored: a later retry with the same key runs again.
"""

from __future__ import annotations

import asyncio
import hashlib
import json

from colonnade.calls.call import Call
from colonnade.calls.envelope import CallResult, CallStatus
from colonnade.calls.errors import error
from colonnade.calls.keys import scope_of
from colonnade.calls.pipeline import Next
from colonnade.store.idempotency_repo import IdempotencyStore

__all__ = ["Idempotency", "input_hash"]

POLL_S = 0.05


def input_hash(call: Call) -> str:
    canonical = json.dumps(call.request.input, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class Idempotency:
    def __init__(self, store: IdempotencyStore, *, retention_s: float = 86_400.0) -> None:
        self.store = store
        self.retention_s = retention_s
        self._local: dict[tuple[str, str], tuple[str, asyncio.Future[CallResult]]] = {}

    async def __call__(self, call: Call, next: Next) -> CallResult:
        key = call.request.constraints.idempotency_key
        if key is None:
            return await next(call)
        scope, digest = scope_of(call), input_hash(call)
        local = self._local.get((scope, key))
        if local is not None:
            leader_digest, leader = local
            if leader_digest != digest:
                return self._mismatch(call, key)
            return await self._follow(call, leader)
        future: asyncio.Future[CallResult] = asyncio.get_running_loop().create_future()
        self._local[(scope, key)] = (digest, future)
        try:
            result = await self._run(call, next, scope, key, digest)
            future.set_result(result)
            return result
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # mark retrieved: followers see it; nobody else must
            raise
        finally:
            self._local.pop((scope, key), None)

    async def _run(self, call: Call, next: Next, scope: str, key: str, digest: str) -> CallResult:
        lease_s = max(call.remaining_s, 1.0) + 5.0
        while True:
            claim = await self.store.claim(scope, key, digest, lease_s=lease_s, retention_s=self.retention_s)
            if claim.kind == "mismatch":
                return self._mismatch(call, key)
            if claim.kind == "done" and claim.result is not None:
                return _as_replay(call, CallResult.model_validate(claim.result))
            if claim.kind == "claimed":
                break
            if call.remaining_s <= POLL_S:  # in flight elsewhere (another replica) until our deadline
                status, err = error(
                    "R-TIMEOUT-001", "a call with this idempotency key is still running elsewhere", key=key
                )
                return call.result(status, error=err)
            await asyncio.sleep(POLL_S)
        try:
            result = await next(call)
        except BaseException:
            await asyncio.shield(self.store.release(scope, key))
            raise
        if result.status is CallStatus.RETRYABLE_ERROR:
            await self.store.release(scope, key)
        else:
            await self.store.complete(
                scope, key, result.model_dump(mode="json"), retention_s=self.retention_s
            )
        return result

    async def _follow(self, call: Call, leader: asyncio.Future[CallResult]) -> CallResult:
        try:
            result = await asyncio.wait_for(asyncio.shield(leader), timeout=call.remaining_s)
        except TimeoutError:
            status, err = error(
                "R-TIMEOUT-001", "the call holding this idempotency key did not finish in time"
            )
            return call.result(status, error=err)
        return _as_replay(call, result)

    def _mismatch(self, call: Call, key: str) -> CallResult:
        status, err = error(
            "I-REQ-IDEMPOTENCY-MISMATCH",
            f"idempotency key {key!r} was first used with different input for '{call.tool.canonical_name}'",
            key=key,
        )
        return call.result(status, error=err)


def _as_replay(call: Call, original: CallResult) -> CallResult:
    """The original outcome, answered to this caller's call_id and marked as a replay."""
    return original.model_copy(
        update={
            "call_id": call.request.call_id,
            "warnings": [*original.warnings, f"replay of {original.call_id}"],
        }
    )
