"""The in-process halves of sharing, without Redis: what each owner tells the fan-out, and what it
does with what another replica told it (circuit, readiness, key cache, values, routing records)."""

from __future__ import annotations

from colonnade.adapters.health_monitor import FAILURES_TO_TRIP, HealthMonitor
from colonnade.calls.envelope import CallResult
from colonnade.calls.manifest import Circuit, ManifestOverride
from colonnade.calls.stages.circuit import CIRCUIT_OPEN, CircuitBreaker, CircuitState
from colonnade.governance.identity.api_keys import ApiKeys
from colonnade.routing.context import Message
from colonnade.shared_state import SharedState
from colonnade.shared_state.values import LocalValues
from colonnade.surfaces.mcp.routing import _decoded, _encoded, _SessionState
from tests.support.stage_calls import BACKEND, answer, failure, stage_call

TIGHT = ManifestOverride(circuit=Circuit(window_ms=10_000, min_attempts=4, failure_ratio=0.75, open_ms=1_000))


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def test_a_circuit_opening_here_is_told_and_one_opened_elsewhere_fails_fast_here() -> None:
    told: list[tuple[str, int]] = []
    here = CircuitBreaker(Clock(), on_open=lambda backend, open_ms: told.append((backend, open_ms)))
    for _ in range(4):
        await here(stage_call(override=TIGHT), failure("R-UPSTREAM-UNAVAILABLE"))
    assert told == [(BACKEND, 1_000)]

    clock = Clock()
    there = CircuitBreaker(clock)
    there.opened_elsewhere(BACKEND, 1_000)
    called: list[object] = []

    async def backend(call: object) -> CallResult:
        called.append(call)
        return await answer()(call)  # type: ignore[arg-type]

    refused = await there(stage_call(override=TIGHT), backend)
    assert refused.error is not None and refused.error.code == CIRCUIT_OPEN and called == []
    clock.now += 1.001  # its own open_ms later, this replica probes for itself
    assert (await there(stage_call(override=TIGHT), backend)).error is None
    assert there.state_of(BACKEND) is CircuitState.CLOSED and len(called) == 1


async def test_an_opening_elsewhere_leaves_a_circuit_probing_here_alone() -> None:
    clock = Clock()
    there = CircuitBreaker(clock)
    there.opened_elsewhere(BACKEND, 1_000)
    clock.now += 2
    there.opened_elsewhere(BACKEND, 1_000)  # still open here (not yet half-open): unchanged
    assert there.states() == {BACKEND: (CircuitState.OPEN, 1)}


async def test_readiness_changes_are_told_and_a_recovery_told_is_checked() -> None:
    told: list[tuple[str, bool]] = []
    monitor = HealthMonitor(timeout_s=0.5, on_change=lambda url, ok: told.append((url, ok)))
    unreachable = "http://127.0.0.1:9/healthz"
    for _ in range(FAILURES_TO_TRIP):
        await monitor.probe(unreachable)
    assert told == [(unreachable, False)] and not monitor.healthy(unreachable)

    other = HealthMonitor(timeout_s=0.5)
    await other.seen_elsewhere(unreachable, False)
    assert not other.healthy(unreachable) and other.failing_since(unreachable) is not None
    await other.seen_elsewhere(unreachable, True)  # probed here, not trusted: still failing
    assert not other.healthy(unreachable)
    await monitor.aclose()
    await other.aclose()


def test_forgetting_every_key_drops_the_cache_and_a_read_in_flight() -> None:
    keys = ApiKeys(store=None, cache_s=60)  # type: ignore[arg-type]
    keys._cache["k1"] = (None, 0.0)
    before = keys._forgotten
    keys.forget_all()
    assert keys._cache == {} and keys._forgotten == before + 1


async def test_in_process_values_keep_at_most_their_bound_dropping_the_expired_then_the_oldest() -> None:
    values = LocalValues(max_items=3)
    await values.set("gone", b"1", ttl_s=0.000001)
    await values.set("a", b"a", ttl_s=60)
    await values.set("b", b"b", ttl_s=60)
    await values.set("c", b"c", ttl_s=60)  # full: the expired one goes first
    assert len(values) == 3 and await values.get("a") == b"a"
    await values.set("d", b"d", ttl_s=60)  # full of live ones: the oldest goes
    assert await values.get("a") is None and await values.get("d") == b"d" and len(values) == 3


def test_a_routing_session_record_round_trips_and_a_foreign_one_is_refused() -> None:
    state = _SessionState(
        [Message("user", "find invoices"), {"role": "assistant", "content": "ok"}], ("billing",), 4
    )
    state.listed = frozenset({"acme:billing:list_invoices"})
    record = _encoded(state, ("acme:crm:get_customer",))
    assert record is not None
    decoded = _decoded(record)
    assert decoded is not None
    again, trail = decoded
    assert again.context == [
        {"role": "user", "content": "find invoices"},
        {"role": "assistant", "content": "ok"},
    ]
    assert (again.domain_hints, again.k, again.listed) == (state.domain_hints, 4, state.listed)
    assert trail == ("acme:crm:get_customer",)
    assert _decoded(b'{"context": 3}') is None and _decoded(b"not json") is None
    assert _encoded(_SessionState([{"role": "user", "content": object()}]), ()) is None


async def test_one_process_shares_nothing_and_says_so() -> None:
    shared = SharedState()
    shared.fanout.publish_soon("key.changed", {"key_id": "k"})  # nobody to tell: nothing happens
    assert await shared.fanout.publish("key.changed", {}) is False
    assert shared.status()["backend"] == "process" and not shared.degraded
    await shared.aclose()
