"""Idempotency: one execution per key (scoped to tenant + tool + actor), recorded before it is answered.

The first call with a key claims it in the database (with a lease while it runs), runs, and
writes its outcome durably *before* answering, so every answered outcome can be replayed: after
a restart, by another replica, to any resend. If the outcome cannot be written before the
deadline, the caller gets `R-TIMEOUT-UNRECORDED` (retryable: resend with the same key) and the
outcome is written again in the background; a resend replays it once it is written. The claim is
never released then: the effect happened, only its record is late. No store round trip is started
for the answer once the deadline has passed, and none is waited for past it: what must still be
written is written in the background. One outcome needs no wait: `S-TOOL-EFFECT-UNKNOWN` is what
every resend gets whether its record lands or not (a key whose attempt never recorded an outcome
is in doubt, and answers the same), so it is answered at once, and noted for the drain stage,
whose answer to a call cut at shutdown then agrees with what its resend replays.

Where an audit stage above sends the call's record through a group commit (PostgreSQL), an outcome
that would be answered only once recorded is handed to it (`join_record`) instead of written here:
it goes to the database with the call's audit record, in the same commit, and the answer waits for
both (or is `R-TIMEOUT-UNRECORDED`, as here). A crash before that commit leaves the claim, as a
crash before this stage's own write would.

Duplicates that arrive in this process while the first call runs wait for its outcome (cheap and
exact). A key held by an attempt elsewhere (another replica, an earlier process) is answered at
once with `R-CAP-KEY-IN-PROGRESS` and `retry_after_ms` while its lease runs. After the lease, an
attempt that never wrote its outcome is *in doubt*: its process died or lost its database, and
whether it took effect is unknown. Nothing runs it again by itself: a resend gets the terminal
`S-TOOL-EFFECT-UNKNOWN`, unless repeating is safe, because the tool is pure or idempotent or its
contract declares that the backend deduplicates on the forwarded `Idempotency-Key`
(`runtime.deduplicates_idempotency_key`); then it runs again and its result says so in a warning.

A tool's question to its caller (an MCP server's input round, `P-PRECOND-INPUT-REQUIRED`) is not an
outcome either: it frees the key, since the caller's answer repeats the call with the same key.
A retryable outcome frees the key, so a retry runs again; but when the backend may have acted
(a timeout, a cut connection, a 502/504, several attempts) and repeating is not safe, the effect
is unknown, and that is the outcome recorded and answered. A database that does not answer
before the call could claim its key gives `R-TIMEOUT-STORE` (nothing ran; `R-CAP-STORE-UNAVAILABLE`
when it failed rather than said nothing), never an internal error. The same key with different
input is refused, never silently replayed.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from colonnade.adapters.outcome import INPUT_REQUIRED
from colonnade.calls.call import Call
from colonnade.calls.call_errors import error
from colonnade.calls.decision_note import join_record, note_effect_unknown
from colonnade.calls.envelope import CallResult, CallStatus
from colonnade.calls.keys import scope_of
from colonnade.calls.pipeline import Next
from colonnade.calls.stages.circuit import CIRCUIT_OPEN
from colonnade.contracts.model import Determinism
from colonnade.observability.tracing import io_span
from colonnade.store.idempotency_repo import Claim, IdempotencyStore, held_here, new_holder
from colonnade.store.store_errors import StoreUnavailable

__all__ = ["EFFECT_UNKNOWN", "Idempotency", "input_hash", "may_have_acted", "may_repeat"]

logger = logging.getLogger(__name__)

LEASE_GRACE_S = 5.0  # a claim's lease: the call's time left, plus this
STORE_RETRY_MS = 250  # retry_after_ms when the database did not answer
IN_PROGRESS_HINT_MS = (50, 1_000)  # retry_after_ms bounds for a key in flight elsewhere
WRITE_ATTEMPT_S = 5.0  # one write to the database that takes longer is abandoned and tried again
DRAIN_S = 10.0  # at shutdown, how long outcomes still being written are waited for
_BACKOFF_S = (0.01, 1.0)  # first and largest wait between tries of a write that failed
_SAFE = (Determinism.PURE, Determinism.IDEMPOTENT)
_RATE_LIMITED = "R-UPSTREAM-429"
EFFECT_UNKNOWN = "S-TOOL-EFFECT-UNKNOWN"

Write = Callable[[], Awaitable[Any]]


def input_hash(call: Call) -> str:
    canonical = json.dumps(call.request.input, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def may_repeat(call: Call) -> bool:
    """Whether running this call a second time cannot add a second effect."""
    return call.manifest.determinism in _SAFE or call.tool.runtime.deduplicates_idempotency_key


@dataclass(eq=False)
class _Attempt:
    """A key's attempt in this process, remembered until its outcome (or release) is in the database.

    `outcome` is None when nothing ran here (the key was refused, replayed or released):
    duplicates then ask the database themselves.
    """

    digest: str
    holder: str
    outcome: asyncio.Future[CallResult | None]
    recorded: asyncio.Event = field(default_factory=asyncio.Event)


class Idempotency:
    def __init__(self, store: IdempotencyStore, *, retention_s: float = 86_400.0) -> None:
        self.store = store
        self.retention_s = retention_s
        self._local: dict[tuple[str, str], _Attempt] = {}
        self._writes: set[asyncio.Future[Any]] = set()

    async def __call__(self, call: Call, next: Next) -> CallResult:
        key = call.request.constraints.idempotency_key
        if key is None:
            return await next(call)
        scope, digest = scope_of(call), input_hash(call)
        while (attempt := self._local.get((scope, key))) is not None:
            if attempt.digest != digest:
                return self._mismatch(call, key)
            followed = await self._follow(call, key, attempt)
            if followed is not None:
                return followed
        return await self._lead(call, next, scope, key, digest)

    # -- the first call with a key in this process ---------------------------------------------

    async def _lead(self, call: Call, next: Next, scope: str, key: str, digest: str) -> CallResult:
        attempt = _Attempt(digest, new_holder(), asyncio.get_running_loop().create_future())
        self._local[(scope, key)] = attempt
        try:
            with io_span("colonnade.store idempotency.claim"):
                claim = await self._claim(call, scope, key, attempt)
        except BaseException:
            self._forget(scope, key, attempt)
            raise
        if not isinstance(claim, Claim):  # answered without running: replay, refusal, store away
            self._forget(scope, key, attempt)
            return claim
        try:
            result = await next(call)
        except BaseException:
            self._settle(call, scope, key, attempt, None)
            raise
        if claim.taken_over:
            result = result.model_copy(update={"warnings": [*result.warnings, _repeat_note(call)]})
        outcome, write = self._settle(call, scope, key, attempt, result)
        assert outcome is not None
        answer_by = _answer_by(call)
        if write is not None and _waits_for_record(outcome):
            recorded = functools.partial(self._recorded_by, call, scope, key, attempt, write, answer_by)
            if join_record(call.request.call_id, recorded):
                return outcome  # the audit stage writes it with the call's record, and waits for both
        if write is not None:
            await self._write_now(scope, key, attempt, write, answer_by)
        return await self._answer(call, key, attempt, outcome, answer_by, replay=False)

    async def _recorded_by(
        self, call: Call, scope: str, key: str, attempt: _Attempt, write: Write, until: float
    ) -> CallResult | None:
        """Write `write` by `until`: None once it is recorded, else the answer in place of the outcome."""
        await self._write_now(scope, key, attempt, write, until)
        return None if attempt.recorded.is_set() else self._unrecorded(call, key)

    async def _claim(self, call: Call, scope: str, key: str, attempt: _Attempt) -> Claim | CallResult:
        """The claim if the key is ours to run; else the answer (replay, in progress, in doubt...)."""
        lease_s = max(call.remaining_s, 1.0) + LEASE_GRACE_S
        take_over = may_repeat(call)
        pause = _BACKOFF_S[0]
        failed = False
        while call.remaining_s > 0:  # no claim is started once the deadline has passed
            try:
                claim = await self._claim_within_deadline(call, scope, key, attempt, lease_s, take_over)
            except StoreUnavailable as exc:
                logger.debug("claiming idempotency key %r failed: %s", key, _reason(exc))
                failed = True
                if call.remaining_s > pause:
                    await asyncio.sleep(pause)
                    pause = min(pause * 2, _BACKOFF_S[1])
                    continue
                break
            if claim is None:
                break
            return self._claim_answer(call, key, claim)
        if failed:  # a claim may have landed although its answer was lost: free it, it never ran
            self._write_later(scope, key, attempt, lambda: self.store.release(scope, key, attempt.holder))
        logger.debug("claiming idempotency key %r: no answer before the deadline", key)
        return self._store_unavailable(call, key, failed=failed)

    async def _claim_within_deadline(
        self, call: Call, scope: str, key: str, attempt: _Attempt, lease_s: float, take_over: bool
    ) -> Claim | None:
        """The claim, or None at the deadline; a claim that lands later is released, not leaked."""
        task = asyncio.ensure_future(
            self.store.claim(
                scope,
                key,
                attempt.digest,
                holder=attempt.holder,
                lease_s=lease_s,
                retention_s=self.retention_s,
                take_over_in_doubt=take_over,
            )
        )
        try:
            done, _ = await asyncio.wait({task}, timeout=call.remaining_s)
        except BaseException:  # the call was cancelled while claiming: it will not run
            done = set()
            raise
        finally:
            if task not in done:
                self._writes.add(task)
                task.add_done_callback(lambda t: self._release_late_claim(t, scope, key, attempt))
        return task.result() if task in done else None

    def _release_late_claim(
        self, task: asyncio.Future[Claim], scope: str, key: str, attempt: _Attempt
    ) -> None:
        self._writes.discard(task)
        if not task.cancelled() and task.exception() is None and task.result().kind == "claimed":
            self._write_later(scope, key, attempt, lambda: self.store.release(scope, key, attempt.holder))

    def _claim_answer(self, call: Call, key: str, claim: Claim) -> Claim | CallResult:
        if claim.kind == "claimed":
            return claim
        if claim.kind == "mismatch":
            return self._mismatch(call, key)
        if claim.kind == "done" and claim.result is not None:
            return _as_replay(call, CallResult.model_validate(claim.result))
        if claim.kind == "in_flight":
            low, high = IN_PROGRESS_HINT_MS
            hint = min(high, max(low, round(claim.lease_left_s * 1000)))
            status, err = error(
                "R-CAP-KEY-IN-PROGRESS",
                f"a call with idempotency key {key!r} is still running "
                f"({'in this gateway' if held_here(claim.holder) else 'in another gateway'})",
                key=key,
                retry_after_ms=hint,
            )
            return call.result(status, error=err)
        return self._effect_unknown(
            call,
            key,
            f"an earlier call with idempotency key {key!r} started but never recorded its outcome "
            "(the gateway running it stopped or lost its database)",
        )

    # -- what is recorded, and when the caller is answered --------------------------------------

    def _settle(
        self, call: Call, scope: str, key: str, attempt: _Attempt, result: CallResult | None
    ) -> tuple[CallResult | None, Write | None]:
        """Decide the outcome to record (and answer) and the write that records it.

        `result` None means the call ended in an exception: its effect is unknown.
        The write is started here only for that case; otherwise the caller runs it.
        """
        safe = may_repeat(call)
        if result is None:
            if safe:
                self._forget(scope, key, attempt)
                self._write_later(scope, key, attempt, lambda: self.store.release(scope, key, attempt.holder))
                return None, None
            unknown = self._effect_unknown(call, key, "the call was interrupted before its outcome was known")
            note_effect_unknown(unknown)
            attempt.outcome.set_result(unknown)
            self._write_later(scope, key, attempt, self._completion(scope, key, attempt, unknown))
            return unknown, None
        outcome = result
        if result.error is not None and result.error.code == INPUT_REQUIRED:
            # The tool asked its caller a question: no outcome yet, and the answer comes back with
            # the same key (an MCP client repeats the call with its answers), so the key is freed.
            attempt.outcome.set_result(result)
            return result, lambda: self.store.release(scope, key, attempt.holder)
        if result.status is CallStatus.RETRYABLE_ERROR:
            if safe or not may_have_acted(result):
                attempt.outcome.set_result(result)
                return result, lambda: self.store.release(scope, key, attempt.holder)
            outcome = self._effect_unknown(call, key, _failure_note(result), **_cause(result))
        attempt.outcome.set_result(outcome)
        return outcome, self._completion(scope, key, attempt, outcome)

    def _completion(self, scope: str, key: str, attempt: _Attempt, outcome: CallResult) -> Write:
        document = outcome.model_dump(mode="json")

        async def complete() -> None:
            stored = await self.store.complete(
                scope, key, attempt.holder, document, retention_s=self.retention_s
            )
            if not stored:  # taken over meanwhile (only when repeating was safe) or purged
                logger.warning("the outcome of idempotency key %r was not stored: the key moved on", key)

        return complete

    async def _write_now(self, scope: str, key: str, attempt: _Attempt, write: Write, until: float) -> None:
        """One try in line (the common case: a few µs on SQLite); on failure, retries in the background.

        None in line once `until` has passed: the write goes to the background at once."""
        if until <= _loop_time():
            self._write_later(scope, key, attempt, write)
            return
        try:
            async with asyncio.timeout_at(min(until, _loop_time() + WRITE_ATTEMPT_S)):
                await write()
        except BaseException as exc:
            self._write_later(scope, key, attempt, write)
            if not isinstance(exc, Exception):
                raise  # cancelled: the write goes on without us
            logger.warning("recording idempotency key %r failed, retrying: %s", key, _reason(exc))
            return
        self._recorded(scope, key, attempt)

    def _write_later(self, scope: str, key: str, attempt: _Attempt, write: Write) -> None:
        """Retry `write` in the background until the database takes it (`drain()` waits at shutdown)."""
        task = asyncio.get_running_loop().create_task(self._keep_writing(scope, key, attempt, write))
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)

    async def _keep_writing(self, scope: str, key: str, attempt: _Attempt, write: Write) -> None:
        pause = _BACKOFF_S[0]
        while True:
            try:
                async with asyncio.timeout(WRITE_ATTEMPT_S):
                    await write()
            except Exception as exc:  # whatever failed, the record must land: it guards an effect
                logger.debug("recording idempotency key %r failed again: %s", key, _reason(exc))
                await asyncio.sleep(pause)
                pause = min(pause * 2, _BACKOFF_S[1])
                continue
            self._recorded(scope, key, attempt)
            return

    def _recorded(self, scope: str, key: str, attempt: _Attempt) -> None:
        attempt.recorded.set()
        self._forget(scope, key, attempt)

    def _forget(self, scope: str, key: str, attempt: _Attempt) -> None:
        """Stop answering duplicates from memory; they ask the database from now on."""
        if self._local.get((scope, key)) is attempt:
            del self._local[(scope, key)]
        if not attempt.outcome.done():
            attempt.outcome.set_result(None)

    async def _answer(
        self, call: Call, key: str, attempt: _Attempt, outcome: CallResult, until: float, *, replay: bool
    ) -> CallResult:
        """`outcome` once it is recorded (a retryable one: once the key is free), waiting until `until`.

        "Effect unknown" is answered at once: it is what a resend gets whether its record lands or not."""
        if outcome.status is CallStatus.RETRYABLE_ERROR:
            await _wait(attempt.recorded, until)
        elif _is_effect_unknown(outcome):
            pass
        elif not await _wait(attempt.recorded, until):
            return self._unrecorded(call, key)
        return _as_replay(call, outcome) if replay else outcome

    def _unrecorded(self, call: Call, key: str) -> CallResult:
        status, err = error(
            "R-TIMEOUT-UNRECORDED",
            "the call ran, but the gateway's database did not take its outcome before the deadline; "
            "the outcome is kept and recorded as soon as the database answers: resend with the same key",
            key=key,
            retry_after_ms=STORE_RETRY_MS,
        )
        return call.result(status, error=err)

    async def _follow(self, call: Call, key: str, attempt: _Attempt) -> CallResult | None:
        """The outcome of the attempt running in this process; None when it ran nothing."""
        try:
            async with asyncio.timeout(call.remaining_s):
                outcome = await asyncio.shield(attempt.outcome)
        except TimeoutError:
            status, err = error(
                "R-TIMEOUT-001", "the call holding this idempotency key did not finish in time"
            )
            return call.result(status, error=err)
        if outcome is None:
            return None
        return await self._answer(call, key, attempt, outcome, _answer_by(call), replay=True)

    async def drain(self) -> None:
        """Wait (a while) for outcomes still being written; call before closing the database."""
        if not self._writes:
            return
        _, pending = await asyncio.wait(set(self._writes), timeout=DRAIN_S)
        for task in pending:
            task.cancel()
        if pending:
            logger.error(
                "%d idempotency records were not written before shutdown; their keys stay in doubt",
                len(pending),
            )

    # -- answers --------------------------------------------------------------------------------

    def _mismatch(self, call: Call, key: str) -> CallResult:
        status, err = error(
            "I-REQ-IDEMPOTENCY-MISMATCH",
            f"idempotency key {key!r} was first used with different input for '{call.tool.canonical_name}'",
            key=key,
        )
        return call.result(status, error=err)

    def _store_unavailable(self, call: Call, key: str, *, failed: bool) -> CallResult:
        """Nothing ran: the database failed (`failed`) or did not answer before the deadline."""
        why = "failed" if failed else "did not answer before the deadline"
        status, err = error(
            "R-CAP-STORE-UNAVAILABLE" if failed else "R-TIMEOUT-STORE",
            f"the gateway's database {why}, so idempotency key {key!r} could not be claimed; "
            "the call did not run",
            key=key,
            retry_after_ms=STORE_RETRY_MS,
        )
        return call.result(status, error=err)

    def _effect_unknown(self, call: Call, key: str, why: str, **details: Any) -> CallResult:
        status, err = error(
            EFFECT_UNKNOWN,
            f"{why}. '{call.tool.canonical_name}' is not idempotent and its backend is not declared to "
            "deduplicate on Idempotency-Key, so it is not run again with this key",
            key=key,
            **details,
        )
        return call.result(status, error=err)


def may_have_acted(result: CallResult) -> bool:
    """Whether the backend may have acted before this retryable failure (unknown: assume it did)."""
    err = result.error
    if err is None:
        return True
    attempts = err.details.get("attempts", 1)
    if isinstance(attempts, int) and attempts > 1:
        return True  # only the last attempt's failure is known
    if err.code.startswith("R-CAP-") or err.code in (_RATE_LIMITED, CIRCUIT_OPEN):
        return False  # refused before reaching the backend, or by it before acting
    if err.code == "R-UPSTREAM-UNAVAILABLE":
        return err.details.get("upstream_status") not in (408, 503)  # 502/504: a proxy lost the answer
    return True  # timeouts and cut connections: the request may have been carried out


def _failure_note(result: CallResult) -> str:
    err = result.error
    code, message = (err.code, err.message) if err is not None else ("?", "no error given")
    return f"the call failed after the backend may have acted ({code}: {message})"


def _cause(result: CallResult) -> dict[str, Any]:
    err = result.error
    return {"cause": err.code, **err.details} if err is not None else {}


def _repeat_note(call: Call) -> str:
    why = (
        "the tool is idempotent"
        if call.manifest.determinism in _SAFE
        else "the backend deduplicates on Idempotency-Key"
    )
    return f"run again after an earlier attempt with this idempotency key was interrupted (safe: {why})"


def _reason(exc: BaseException) -> str:
    cause = exc.__cause__
    return f"{type(exc).__name__}" + (f" ({type(cause).__name__})" if cause is not None else "")


def _loop_time() -> float:
    return asyncio.get_running_loop().time()


def _answer_by(call: Call) -> float:
    """When the caller is answered at the latest: its deadline (on the loop's clock)."""
    return _loop_time() + call.remaining_s


def _waits_for_record(outcome: CallResult) -> bool:
    """Whether `outcome` is answered only once recorded (not a retryable one, nor effect unknown)."""
    return outcome.status is not CallStatus.RETRYABLE_ERROR and not _is_effect_unknown(outcome)


def _is_effect_unknown(result: CallResult) -> bool:
    return result.error is not None and result.error.code == EFFECT_UNKNOWN


async def _wait(event: asyncio.Event, until: float) -> bool:
    """Whether `event` is set by loop time `until`."""
    if event.is_set():
        return True
    try:
        async with asyncio.timeout_at(until):
            await event.wait()
    except TimeoutError:
        return False
    return True


def _as_replay(call: Call, original: CallResult) -> CallResult:
    """The original outcome, answered to this caller's call_id and marked as a replay."""
    return original.model_copy(
        update={
            "call_id": call.request.call_id,
            "warnings": [*original.warnings, f"replay of {original.call_id}"],
        }
    )
