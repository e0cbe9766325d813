"""The held-out check of envelope version 1: a client that knows only the seed's four outcomes.

The client below imports nothing of Colonnade: it speaks plain HTTP, knows the four statuses
(`success | retryable_error | terminal_error | invalid_request`) and validates every answer against
`call-result-v1.schema.json` as a third party would (the file, read as published). It runs 1,000
mixed calls against a real gateway on loopback (the fault backend for faults and two-phase
reservations, the demo billing API for approvals): backend faults, short timeouts and passed
deadlines, approval-gated calls, duplicates with idempotency keys (replayed, and reused with other
input), prepared calls it commits twice, malformed envelopes and unknown tools. Each answer must be
valid and carry one of the four outcomes; each kind of call must read the way the seed's client
would act on it. A last test follows a parked approval through with nothing but what its v1 answer
says (a second person approves `details.approval_id`, the requester calls again with its token).
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx2
import pytest
import yaml
from jsonschema import Draft202012Validator

from examples.demo_backend import create_app as demo_backend_app
from tests.support.fault_backend import create_app as fault_backend_app
from tests.support.fault_contract import fault_contract
from tests.support.governed import governed_gateway
from tests.support.loopback import serve_in_thread
from tests.support.repo import ROOT
from tests.surfaces.rest_harness import demo_contract_file, gateway_settings, serve_gateway

pytestmark = pytest.mark.integration  # a thousand calls through the whole pipeline: not the fast tier

SEED_OUTCOMES = {"success", "retryable_error", "terminal_error", "invalid_request"}
SCHEMA = json.loads(
    (ROOT / "src" / "colonnade" / "schemas" / "call-result-v1.schema.json").read_text("utf-8")
)
CHECK = Draft202012Validator(SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER)
CALLS = 1_000
CONCURRENCY = 12
_ONCE = {"retry_policy": {"max_attempts": 1}}


@dataclass(frozen=True)
class Setup:
    base_url: str
    fault_url: str


@pytest.fixture(scope="module")
def backend_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The demo backend (billing: the approval-gated void_invoice) on loopback."""
    with serve_in_thread(
        demo_backend_app(tmp_path_factory.mktemp("backend") / "demo.db"), lifespan="on"
    ) as url:
        yield url


@pytest.fixture(scope="module")
def setup(backend_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    folder = tmp_path_factory.mktemp("seed-client")
    with serve_in_thread(fault_backend_app()) as fault_url:
        faults = folder / "faults.yaml"
        faults.write_text(yaml.safe_dump(fault_contract(fault_url)), encoding="utf-8")
        contracts = [faults, demo_contract_file(folder, "billing", backend_url)]
        with serve_gateway(gateway_settings(folder / "data", contracts)) as running:
            yield Setup(str(running.client.base_url).rstrip("/"), fault_url)


@dataclass
class SeedClient:
    """What a client written from the seed's section 7 does: post, validate, read the four outcomes."""

    http: httpx2.AsyncClient
    answers: Counter[str]
    problems: list[str]

    async def post(self, path: str, body: Any, **headers: str) -> dict[str, Any]:
        if isinstance(body, bytes):
            sent = await self.http.post(
                path, content=body, headers={"content-type": "application/json", **headers}
            )
        else:
            sent = await self.http.post(path, json=body, headers=headers)
        answer = sent.json()
        found = [f"{list(e.absolute_path)}: {e.message}" for e in CHECK.iter_errors(answer)]
        if found or answer.get("status") not in SEED_OUTCOMES or sent.status_code >= 500:
            self.problems.append(f"{path} {body!r} -> HTTP {sent.status_code} {answer}: {found}")
        self.answers[answer.get("status", "?")] += 1
        return dict(answer)

    async def call(self, tool: str, arguments: dict[str, Any], **envelope: Any) -> dict[str, Any]:
        return await self.post("/v1/calls", {"tool_id": tool, "input": arguments, **envelope})


def outcome(answer: dict[str, Any]) -> tuple[str, str | None]:
    return answer["status"], (answer["error"] or {}).get("code")


class Expect:
    """What each kind of call must read as, to a client that knows only the four outcomes."""

    def __init__(self) -> None:
        self.failures: list[str] = []

    def that(self, ok: bool, kind: str, answer: Any) -> None:
        if not ok:
            self.failures.append(f"{kind}: {answer}")


async def one_call(client: SeedClient, expect: Expect, n: int, rng: random.Random) -> str:
    """One call of a kind drawn at random (some kinds are several requests: a duplicate, a commit)."""
    kind = rng.choice(KINDS)
    await kind(client, expect, n, rng)
    return kind.__name__


async def read_ok(client: SeedClient, expect: Expect, n: int, rng: random.Random) -> None:
    item = rng.choice(["I-1", "I-2"])
    answer = await client.call("chaos:faults:get_item", {"item_id": item})
    expect.that(outcome(answer) == ("success", None) and answer["output"]["id"] == item, "read", answer)
    expect.that(answer["provenance"]["tool_id"] == "chaos:faults:get_item", "provenance", answer)


async def backend_fault(client: SeedClient, expect: Expect, n: int, rng: random.Random) -> None:
    fault, wanted = rng.choice(
        [
            ("503", "retryable_error"),
            ("429:20", "retryable_error"),
            ("500", "terminal_error"),
            ("malformed", "terminal_error"),
            ("bad_output", "terminal_error"),
        ]
    )
    answer = await client.call("chaos:faults:get_item", {"item_id": "I-1", "fault": fault}, constraints=_ONCE)
    expect.that(answer["status"] == wanted and answer["error"] is not None, f"fault {fault}", answer)


async def short_timeout(client: SeedClient, expect: Expect, n: int, rng: random.Random) -> None:
    constraints = {"timeout_ms": 60, **_ONCE}
    answer = await client.call(
        "chaos:faults:get_item", {"item_id": "I-1", "fault": "slow:600"}, constraints=constraints
    )
    expect.that(answer["status"] == "retryable_error", "short timeout", answer)
    expect.that(isinstance(answer["metrics"]["duration_ms"], int), "integer duration", answer)


async def passed_deadline(client: SeedClient, expect: Expect, n: int, rng: random.Random) -> None:
    past = int(time.time() * 1000) - rng.randint(1, 60_000)
    answer = await client.call(
        "chaos:faults:get_item", {"item_id": "I-1"}, constraints={"deadline_unix_ms": past}
    )
    expect.that(outcome(answer) == ("invalid_request", "I-REQ-DEADLINE-PASSED"), "passed deadline", answer)


async def approval(client: SeedClient, expect: Expect, n: int, rng: random.Random) -> None:
    arguments = {"invoice_id": "INV-2001", "reason": f"held-out check {n}"}
    answer = await client.call("acme:billing:void_invoice", arguments)
    details = (answer["error"] or {}).get("details", {})
    expect.that(outcome(answer) == ("terminal_error", "P-PRECOND-APPROVAL-PENDING"), "approval", answer)
    expect.that(
        bool(details.get("approval_id")) and bool(details.get("next_action")), "approval details", answer
    )
    expect.that(answer["side_effects"] == [], "nothing ran", answer)


async def duplicate(client: SeedClient, expect: Expect, n: int, rng: random.Random) -> None:
    """The same write with the same key twice (or three times): one effect, one outcome, replayed."""
    key = f"dup-{n}-{rng.getrandbits(32)}"
    arguments = {"item_id": f"D-{n}", "value": f"v{n}"}
    first = await client.call("chaos:faults:put_item", arguments, constraints={"idempotency_key": key})
    for _ in range(rng.randint(1, 2)):
        again = await client.call("chaos:faults:put_item", arguments, constraints={"idempotency_key": key})
        same = (outcome(again), again["output"]) == (outcome(first), first["output"])
        expect.that(same and first["status"] == "success", "duplicate replayed", (first, again))


async def reused_key(client: SeedClient, expect: Expect, n: int, rng: random.Random) -> None:
    key = f"reuse-{n}-{rng.getrandbits(32)}"
    first = await client.call(
        "chaos:faults:create_payment", {"note": f"pay {n}"}, constraints={"idempotency_key": key}
    )
    other = await client.call(
        "chaos:faults:create_payment", {"note": f"other {n}"}, constraints={"idempotency_key": key}
    )
    expect.that(first["status"] == "success", "payment", first)
    expect.that(outcome(other) == ("invalid_request", "I-REQ-IDEMPOTENCY-MISMATCH"), "key reused", other)


async def prepare_and_commit(client: SeedClient, expect: Expect, n: int, rng: random.Random) -> None:
    prepared = await client.call("chaos:faults:reserve", {"item_id": f"R-{n}"})
    token = prepared["commit_token"]
    expect.that(prepared["status"] == "success" and bool(token), "prepared", prepared)
    if not token:
        return
    committed = await client.post("/v1/calls/commit", {"commit_token": token})
    expect.that(outcome(committed) == ("success", None), "commit", committed)
    again = await client.post("/v1/calls/commit", {"commit_token": token})
    expect.that(outcome(again) == ("terminal_error", "P-PRECOND-COMMIT-TOKEN"), "commit twice", again)


async def dry_run(client: SeedClient, expect: Expect, n: int, rng: random.Random) -> None:
    answer = await client.call("chaos:faults:create_payment", {"note": "dry"}, dry_run=True)
    expect.that(outcome(answer) == ("success", None) and answer["output"] is None, "dry run", answer)


async def bad_arguments(client: SeedClient, expect: Expect, n: int, rng: random.Random) -> None:
    answer = await client.call("chaos:faults:get_item", {"item_id": n, "colour": "red"})
    expect.that(outcome(answer) == ("invalid_request", "I-REQ-SCHEMA"), "bad arguments", answer)


async def unknown_tool(client: SeedClient, expect: Expect, n: int, rng: random.Random) -> None:
    answer = await client.call(f"chaos:faults:nothing_{n}", {})
    expect.that(outcome(answer) == ("invalid_request", "I-REQ-UNKNOWN-TOOL"), "unknown tool", answer)
    expect.that(
        answer["provenance"]["tool_id"] == f"chaos:faults:nothing_{n}", "asked-for provenance", answer
    )


async def malformed(client: SeedClient, expect: Expect, n: int, rng: random.Random) -> None:
    body = rng.choice([b'{"tool_id": ', b"[1, 2]", b'{"tool_id": 7}', b'{"tool_id": "x", "dry_run": "yes"}'])
    answer = await client.post("/v1/calls", body)
    expect.that(outcome(answer) == ("invalid_request", "I-REQ-ENVELOPE"), "malformed", answer)


KINDS = (
    read_ok,
    read_ok,
    backend_fault,
    backend_fault,
    short_timeout,
    passed_deadline,
    approval,
    duplicate,
    reused_key,
    prepare_and_commit,
    dry_run,
    bad_arguments,
    unknown_tool,
    malformed,
)


async def run_mixed(base_url: str, calls: int, seed: int) -> tuple[SeedClient, Expect, Counter[str]]:
    rng = random.Random(seed)
    plan = [random.Random(rng.getrandbits(64)) for _ in range(calls)]
    limits = httpx2.Limits(max_connections=CONCURRENCY)
    async with httpx2.AsyncClient(base_url=base_url, timeout=120, limits=limits) as http:
        client, expect, kinds = SeedClient(http, Counter(), []), Expect(), Counter[str]()
        gate = asyncio.Semaphore(CONCURRENCY)

        async def bounded(n: int) -> None:
            async with gate:
                kinds[await one_call(client, expect, n, plan[n])] += 1

        await asyncio.gather(*(bounded(n) for n in range(calls)))
    return client, expect, kinds


def test_a_seed_only_client_sees_four_outcomes_and_valid_envelopes_in_1000_mixed_calls(setup: Setup) -> None:
    started = time.monotonic()
    client, expect, kinds = asyncio.run(run_mixed(setup.base_url, CALLS, seed=30))
    elapsed = time.monotonic() - started
    assert client.problems == [], (
        f"{len(client.problems)} answers outside the seed's schema: {client.problems[:5]}"
    )
    assert expect.failures == [], f"{len(expect.failures)} answers read wrong: {expect.failures[:5]}"
    assert sum(kinds.values()) == CALLS and set(kinds) == {kind.__name__ for kind in KINDS}
    assert set(client.answers) == SEED_OUTCOMES, client.answers  # every outcome was met, and no other
    print(
        f"\n{sum(client.answers.values())} answers to {CALLS} calls in {elapsed:.1f}s: {dict(client.answers)}"
    )


def test_the_seed_client_reads_every_answer_the_schema_allows_and_nothing_more() -> None:
    """The check above cannot pass a gateway that answers version 2: its statuses and fields fail."""
    version_2 = {
        "envelope_version": 2,
        "call_id": "c",
        "status": "pending",
        "output": None,
        "error": None,
        "side_effects": [],
        "metrics": {"duration_ms": 1.5, "cpu_ms": None, "memory_peak_mb": None},
        "provenance": None,
        "warnings": [],
        "commit_token": None,
        "pending": {
            "reason": "awaiting_approval",
            "token": "ap_x",
            "expires_at": "2030-01-01T00:00:00Z",
            "next_action": "ask",
        },
    }
    assert not CHECK.is_valid(version_2)
    assert {error.validator for error in CHECK.iter_errors(version_2)} >= {"const", "additionalProperties"}


def test_a_seed_client_acts_on_a_parked_approval_with_what_its_details_say(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The fix of P-PRECOND-APPROVAL-PENDING is enough: a second person approves details.approval_id,
    the requester reads the approval's token and calls again; the call runs once, every answer v1."""
    with governed_gateway(tmp_path_factory.mktemp("seed-approval")) as governed:
        alice, bob = governed.token("admin", sub="alice"), governed.token("admin", sub="bob")
        call = {"tool_id": "acme:items:drop_item", "input": {"item_id": "S-1"}}

        def post(token: str, path: str, body: dict[str, Any], **headers: str) -> dict[str, Any]:
            auth = {"Authorization": f"Bearer {token}", **headers}
            answer = httpx2.post(governed.base_url + path, json=body, headers=auth, timeout=30).json()
            return dict(answer)

        parked = post(alice, "/v1/calls", call)
        assert [e.message for e in CHECK.iter_errors(parked)] == []
        assert outcome(parked) == ("terminal_error", "P-PRECOND-APPROVAL-PENDING")
        approval_id = parked["error"]["details"]["approval_id"]
        assert f"/v1/approvals/{approval_id}/approve" in parked["error"]["details"]["next_action"]
        decided = post(bob, f"/v1/approvals/{approval_id}/approve", {"comment": "fine"})
        assert decided["approval"]["state"] == "approved", decided
        shown = httpx2.get(
            f"{governed.base_url}/v1/approvals/{approval_id}", headers={"Authorization": f"Bearer {alice}"}
        ).json()
        ran = post(alice, "/v1/calls", {**call, "approval_token": shown["approval"]["token"]})
        assert [e.message for e in CHECK.iter_errors(ran)] == []
        assert outcome(ran) == ("success", None) and ran["side_effects"] == ["destructive"], ran
        again = post(alice, "/v1/calls", {**call, "approval_token": shown["approval"]["token"]})
        assert [e.message for e in CHECK.iter_errors(again)] == [] and again["status"] in SEED_OUTCOMES
        assert again["status"] != "success", "an approval runs its call once"
        drops = [e for e in governed.effects() if e["kind"] == "drop" and e["item_id"] == "S-1"]
        assert len(drops) == 1
