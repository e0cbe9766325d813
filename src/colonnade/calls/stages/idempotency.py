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
from typing import Any

from colonnade.calls.call import Call
from colonnade.calls.call_errors import error
from colonnade.calls.envelope import CallResult, CallStatus
from colonnade.calls.keys import scope_of
from colonnade.calls.pipeline import Next
from colonnade.store.idempotency_repo import Claim, IdempotencyStore

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
        self._writes: set[asyncio.Future[Any]] = set()

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
            result, write = await self._run(call, next, scope, key, digest)
        except BaseException as exc:
            self._local.pop((scope, key), None)
            future.set_exception(exc)
            future.exception()  # mark retrieved: followers see it; nobody else must
            raise
        future.set_result(result)
        if write is None:
            self._local.pop((scope, key), None)
        else:  # answer duplicates from memory until the stored outcome is readable by everyone
            write.add_done_callback(lambda _: self._local.pop((scope, key), None))
        return result

    async def _run(
        self, call: Call, next: Next, scope: str, key: str, digest: str
    ) -> tuple[CallResult, asyncio.Task[None] | None]:
        lease_s = max(call.remaining_s, 1.0) + 5.0
        while True:
            claim = await self._claim_within_deadline(call, scope, key, digest, lease_s)
            if claim is None:
                status, err = error(
                    "R-TIMEOUT-001", "the idempotency store did not answer before the deadline"
                )
                return call.result(status, error=err), None
            if claim.kind == "mismatch":
                return self._mismatch(call, key), None
            if claim.kind == "done" and claim.result is not None:
                return _as_replay(call, CallResult.model_validate(claim.result)), None
            if claim.kind == "claimed":
                break
            if call.remaining_s <= POLL_S:  # in flight elsewhere (another replica) until our deadline
                status, err = error(
                    "R-TIMEOUT-001", "a call with this idempotency key is still running elsewhere", key=key
                )
                return call.result(status, error=err), None
            await asyncio.sleep(POLL_S)
        try:
            result = await next(call)
        except BaseException:
            await asyncio.shield(self.store.release(scope, key))
            raise
        write = self._record(scope, key, result)
        if result.status is CallStatus.RETRYABLE_ERROR:
            # Free the key before answering, so the caller's retry can claim it, but never past the deadline.
            await asyncio.wait({write}, timeout=call.remaining_s)
            return result, None
        return result, write

    async def _claim_within_deadline(
        self, call: Call, scope: str, key: str, digest: str, lease_s: float
    ) -> Claim | None:
        """The claim, or None at the deadline; a claim that lands later is released, not leaked."""
        task = asyncio.ensure_future(
            self.store.claim(scope, key, digest, lease_s=lease_s, retention_s=self.retention_s)
        )
        done, _ = await asyncio.wait({task}, timeout=call.remaining_s)
        if task in done:
            return task.result()
        self._writes.add(task)
        task.add_done_callback(lambda t: self._release_late_claim(t, scope, key))
        return None

    def _release_late_claim(self, task: asyncio.Future[Claim], scope: str, key: str) -> None:
        self._writes.discard(task)
        if not task.cancelled() and task.exception() is None and task.result().kind == "claimed":
            release = asyncio.get_running_loop().create_task(self.store.release(scope, key))
            self._writes.add(release)
            release.add_done_callback(self._writes.discard)

    def _record(self, scope: str, key: str, result: CallResult) -> asyncio.Task[None]:
        """Store the outcome after answering: the caller does not wait for the write.

        Duplicates in this process are answered from memory meanwhile; elsewhere they see the key
        in flight until the write lands. `drain()` waits for pending writes (on shutdown).
        """
        if result.status is CallStatus.RETRYABLE_ERROR:
            write = self.store.release(scope, key)
        else:
            write = self.store.complete(
                scope, key, result.model_dump(mode="json"), retention_s=self.retention_s
            )
        task = asyncio.get_running_loop().create_task(write)
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)
        return task

    async def drain(self) -> None:
        """Wait for outcomes still being written (call before closing the database)."""
        if self._writes:
            await asyncio.gather(*self._writes, return_exceptions=True)

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
