"""The stimulus/response contract: answers for success, unknown ops, bad input and failures; never raises."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from colonnade.organs import FunctionOrgan, Organ, Response, Stimulus, StimulusContext
from colonnade.organs.cpu import CpuMeter
from colonnade.organs.dispatch import send
from examples.organs.vault import organ as vault
from tests.support.organs import lab


@pytest.fixture
def context(tmp_path: Path) -> StimulusContext:
    return StimulusContext(data_dir=str(tmp_path), call_id="c-1")


async def _stimulate(organ: Organ, op: str, context: StimulusContext, **given: object) -> Response:
    return await organ.stimulate(Stimulus(op=op, input=dict(given), context=context))


def test_both_organs_satisfy_the_protocol() -> None:
    assert isinstance(vault, Organ) and isinstance(lab, Organ)


async def test_success_carries_the_output_latency_cost_and_cpu(context: StimulusContext) -> None:
    stored = await _stimulate(vault, "store", context, key="a.txt", content="hello")
    assert stored.ok and stored.error is None
    assert stored.output is not None and stored.output["size"] == 5 and stored.output["replaced"] is False
    assert stored.latency_ms > 0 and stored.cost == 0 and stored.cpu_ms is not None and stored.cpu_ms > 0
    again = await _stimulate(vault, "store", context, key="a.txt", content="hello")
    assert again.output is not None and again.output["replaced"] is True
    read = await _stimulate(vault, "retrieve", context, key="a.txt")
    assert read.ok and read.output is not None
    assert (read.output["content"], read.output["encoding"]) == ("hello", "utf-8")


async def test_bytes_travel_as_base64(context: StimulusContext) -> None:
    png = "iVBORw0KGgo="
    stored = await _stimulate(vault, "store", context, key="dot.png", content=png, encoding="base64")
    assert stored.ok and stored.output is not None and stored.output["size"] == 8
    read = await _stimulate(vault, "retrieve", context, key="dot.png")
    assert read.output is not None and read.output["content"] == png and read.output["encoding"] == "base64"
    bad = await _stimulate(vault, "store", context, key="x.bin", content="%%%", encoding="base64")
    assert bad.error is not None and bad.error.code == "Rejected" and "base64" in bad.error.message


async def test_an_unsupported_op_is_an_answer_naming_the_op(context: StimulusContext) -> None:
    for op in ("shred", "similarity.cluster", "nothing.search"):
        response = await _stimulate(vault, op, context)
        assert response.ok is False and response.error is not None
        assert response.error.code == "UnsupportedOperation"
        assert f"no operation '{op}'" in response.error.message
        assert response.error.details["supported"] == ["store", "retrieve", "delete", "similarity.search"]


async def test_invalid_input_lists_every_problem_without_running(context: StimulusContext) -> None:
    response = await _stimulate(vault, "store", context, key="", colour="red")
    assert response.error is not None and response.error.code == "InvalidInput"
    pointers = [v["pointer"] for v in response.error.details["violations"]]
    assert pointers == ["/key", "/content", "/colour"]
    assert (await _stimulate(vault, "retrieve", context, key="")).error is not None


async def test_expected_failures_and_bugs_are_answers_too(context: StimulusContext) -> None:
    missing = await _stimulate(vault, "retrieve", context, key="never.txt")
    assert missing.error is not None and missing.error.code == "NotFound"
    assert missing.error.details == {"key": "never.txt"}
    refused = await _stimulate(lab, "refuse", context, why="busy")
    assert refused.error is not None and (refused.error.code, refused.error.message) == (
        "Conflict",
        "refused: busy",
    )
    crashed = await _stimulate(lab, "crash", context, secret="s3cret")
    assert crashed.error is not None and crashed.error.code == "Internal"
    assert "ZeroDivisionError" in crashed.error.message and "s3cret" not in crashed.error.message


async def test_sub_organ_ops_are_routed_to_the_part(context: StimulusContext) -> None:
    for key, text in {
        "a.txt": "overdue invoice for acme",
        "b.txt": "lunch menu",
        "c.txt": "invoice paid",
    }.items():
        assert (await _stimulate(vault, "store", context, key=key, content=text)).ok
    found = await _stimulate(vault, "similarity.search", context, query="overdue invoice", k=2)
    assert found.ok and found.output is not None
    assert [m["key"] for m in found.output["matches"]] == ["a.txt", "c.txt"]
    assert found.output["matches"][0]["score"] > found.output["matches"][1]["score"]
    assert vault.describe().sub_organs[0].name == "similarity"


async def test_deleting_is_idempotent(context: StimulusContext) -> None:
    await _stimulate(vault, "store", context, key="gone.txt", content="x")
    first = await _stimulate(vault, "delete", context, key="gone.txt")
    second = await _stimulate(vault, "delete", context, key="gone.txt")
    assert first.output == {"key": "gone.txt", "deleted": True}
    assert second.output == {"key": "gone.txt", "deleted": False}


async def test_send_bounds_the_time_and_turns_a_raising_organ_into_an_answer() -> None:
    slow = await send(lab, Stimulus(op="wait", input={"seconds": 5}), timeout_s=0.05)
    assert slow.error is not None and slow.error.code == "Timeout" and 40 <= slow.latency_ms < 2000

    class Raising:
        def describe(self) -> object:
            return lab.describe()

        async def stimulate(self, stimulus: Stimulus) -> Response:
            raise RuntimeError("broken organ")

    broken = await send(Raising(), Stimulus(op="add"))  # type: ignore[arg-type]
    assert broken.error is not None and broken.error.code == "Internal"
    assert "RuntimeError" in broken.error.message


async def test_cpu_counts_only_the_coroutine_own_steps() -> None:
    async def idle() -> None:
        await asyncio.sleep(0.2)

    async def busy() -> None:
        total = 0
        for index in range(300_000):
            total += index
        await asyncio.sleep(0)

    meter = CpuMeter()
    burner = asyncio.create_task(busy())  # other work on the loop while `idle` waits
    await meter.run(idle())
    await burner
    assert meter.ms < 5.0
    spent = await send(lab, Stimulus(op="spin", input={"rounds": 300_000}))
    assert spent.ok and spent.cpu_ms is not None and spent.cpu_ms > 1.0


def test_a_function_must_declare_its_inputs_with_type_hints() -> None:
    organ = FunctionOrgan(
        "bad", version="1.0.0", description="d", division="x", subsystem="y", tags=["a", "b", "c"]
    )
    with pytest.raises(TypeError, match="parameter 'x' has no type hint"):
        organ.function(tags=["a", "b"], examples=[], side_effects=[], idempotent=True)(lambda x: x)
