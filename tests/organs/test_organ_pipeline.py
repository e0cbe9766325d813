"""Organ functions as catalog tools, called through the gateway's one pipeline (governance and all)."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import generate_latest

from colonnade.calls.envelope import CallConstraints, CallRequest, CallResult
from colonnade.config import OrganSettings, Settings
from colonnade.contracts.model import Determinism, SideEffects
from colonnade.organs import OrganHost, Response, Stimulus
from colonnade.organs.card_files import write_cards
from colonnade.organs.functional import unsupported
from colonnade.organs.organ_errors import OrganCardsInvalid, OrganLoadError
from colonnade.runtime.gateway import Gateway
from examples.organs.vault import organ as vault
from tests.support.organs import RECEIVED, lab, write_lab_cards
from tests.support.repo import ROOT

VAULT_CARDS = ROOT / "examples" / "organs" / "vault" / "cards"


@pytest.fixture
async def gateway(tmp_path: Path) -> AsyncIterator[Gateway]:
    """Lab and vault organs (given live, not from cards), tenant acme, no database."""
    settings = Settings(data_dir=tmp_path, organs=OrganSettings(tenant="acme"))
    built = Gateway(settings, organs=OrganHost(organs=[lab, vault], data_dir=tmp_path / "organs"))
    yield built
    await built.aclose()


async def _call(
    gateway: Gateway, tool: str, constraints: CallConstraints | None = None, **given: Any
) -> CallResult:
    request = CallRequest(tool_id=tool, input=given, constraints=constraints or CallConstraints())
    return await gateway.calls.call(request, gateway.local_principal)


def test_each_function_is_a_tool_with_the_contract_vocabulary(gateway: Gateway) -> None:
    tools = {t.canonical_name: t for t in gateway.catalog.tools()}
    assert {"acme:vault:store", "acme:vault:delete", "acme:vault:similarity.search", "acme:lab:add"} <= set(
        tools
    )
    delete, store, search, add = (
        tools[f"acme:{n}"] for n in ("vault:delete", "vault:store", "vault:similarity.search", "lab:add")
    )
    assert (delete.side_effects, delete.determinism) == (SideEffects.DESTRUCTIVE, Determinism.IDEMPOTENT)
    assert delete.requires_human_approval and delete.annotations.destructive and not delete.safe_for_agents
    assert (store.side_effects, store.determinism) == (SideEffects.WRITE, Determinism.IDEMPOTENT)
    assert (search.side_effects, add.determinism) == (SideEffects.READ, Determinism.PURE)
    assert tools["acme:lab:wait"].determinism is Determinism.SIDE_EFFECTFUL
    assert tools["acme:lab:fetch"].annotations.open_world and not add.annotations.open_world
    assert search.wire_name == "acme__vault__similarity_search"
    assert (store.adapter, store.source) == ("organ", "organ")


def test_queue_cap_and_p95_become_the_manifest(gateway: Gateway) -> None:
    store = gateway.manifests.for_tool(gateway.catalog.get("acme:vault:store"))  # type: ignore[arg-type]
    assert store.limits.concurrency_max == 8
    assert store.slo.p95_latency_ms_max == 50 and store.slo.success_rate_min == pytest.approx(0.999)
    assert store.capabilities.net_allowlist == []


async def test_a_call_runs_the_organ_and_reports_its_cpu(gateway: Gateway) -> None:
    stored = await _call(gateway, "acme__vault__store", key="a.txt", content="hello")
    assert stored.status == "success", stored.error
    assert stored.output["size"] == 5 and stored.side_effects == ["write"]
    assert stored.metrics.cpu_ms is not None and 0 < stored.metrics.cpu_ms <= stored.metrics.duration_ms
    assert stored.provenance is not None and stored.provenance.tool_id == "acme:vault:store"
    read = await _call(gateway, "acme:vault:retrieve", key="a.txt")
    assert read.status == "success" and read.output["content"] == "hello"
    assert (gateway.settings.data_dir / "organs" / "vault" / "vault.db").is_file()


async def test_bad_input_is_refused_before_the_organ_sees_it(gateway: Gateway) -> None:
    RECEIVED.clear()
    result = await _call(gateway, "acme:lab:add", a="one")
    assert result.status == "invalid_request" and result.error is not None
    assert result.error.code == "I-REQ-SCHEMA" and result.error.details["violations"][0]["pointer"] == "/a"
    assert RECEIVED == []


async def test_organ_failures_map_onto_the_call_taxonomy(gateway: Gateway) -> None:
    expected = {
        ("acme:vault:retrieve", "key", "never.txt"): ("I-REQ-UPSTREAM-NOT-FOUND", "terminal_error"),
        ("acme:lab:refuse", "why", "busy"): ("P-PRECOND-CONFLICT", "terminal_error"),
        ("acme:lab:crash", "secret", "s3cret"): ("S-TOOL-ORGAN-FAULT", "terminal_error"),
    }
    for (tool, name, value), (code, status) in expected.items():
        result = await _call(gateway, tool, **{name: value})
        assert result.error is not None and (result.error.code, result.status) == (code, status), result
        assert result.error.fix
    crashed = await _call(gateway, "acme:lab:crash", secret="s3cret")
    assert crashed.error is not None and "s3cret" not in crashed.error.message
    assert crashed.error.details["organ_error"] == "Internal"


async def test_the_deadline_holds_for_an_organ(gateway: Gateway) -> None:
    result = await _call(gateway, "acme:lab:wait", CallConstraints(timeout_ms=100), seconds=5)
    # `wait` is not idempotent and was sent without a key: a timeout leaves its effect unknown
    assert result.error is not None and result.status == "terminal_error"
    assert (result.error.code, result.error.details["cause"]) == (
        "S-TOOL-EFFECT-UNKNOWN-NO-KEY",
        "R-TIMEOUT-001",
    )
    assert result.metrics.duration_ms < 3000


async def test_the_queue_cap_refuses_a_call_over_it(gateway: Gateway) -> None:
    first = asyncio.create_task(_call(gateway, "acme:lab:wait", seconds=0.5))
    await asyncio.sleep(0.1)
    second = await _call(gateway, "acme:lab:wait", seconds=0)
    assert second.error is not None and second.error.code == "R-CAP-CONCURRENCY"
    assert second.error.details["concurrency_max"] == 1
    assert (await first).status == "success"


async def test_slow_calls_are_counted_against_the_p95_objective(gateway: Gateway) -> None:
    await _call(gateway, "acme:lab:wait", seconds=0.01)  # objective: 1 ms
    text = generate_latest(gateway.metrics.registry).decode()
    assert 'colonnade_tool_slo_p95_seconds{tool="acme:lab:wait"} 0.001' in text
    assert 'colonnade_calls_over_slo_total{tool="acme:lab:wait"} 1.0' in text


async def test_a_destructive_function_needs_approval_like_any_destructive_tool(gateway: Gateway) -> None:
    await _call(gateway, "acme:vault:store", key="keep.txt", content="x")
    result = await _call(gateway, "acme__vault__delete", key="keep.txt")
    assert result.error is not None and result.error.code == "P-PRECOND-APPROVAL-REQUIRED"
    assert (await _call(gateway, "acme:vault:retrieve", key="keep.txt")).status == "success"  # still there


async def test_the_network_policy_and_in_process_organs(gateway: Gateway) -> None:
    confined = CallConstraints(net_allowlist=["api.example.com:443"])
    fetched = await _call(gateway, "acme:lab:fetch", confined, url="https://api.example.com")
    assert fetched.error is not None and fetched.error.code == "P-PRECOND-NET-UNCHECKED"
    assert (await _call(gateway, "acme:lab:fetch", url="https://api.example.com")).status == "success"
    local = await _call(gateway, "acme:lab:add", confined, a=1)  # reaches no network: any allow-list holds
    assert local.status == "success"


async def test_an_organ_that_no_longer_answers_its_card(tmp_path: Path) -> None:
    class Drifted:
        def describe(self) -> Any:
            return lab.describe()

        async def stimulate(self, stimulus: Stimulus) -> Response:
            return unsupported("lab", stimulus.op, [])

    gateway = Gateway(Settings(data_dir=tmp_path), organs=OrganHost(organs=[Drifted()]))  # type: ignore[list-item]
    try:
        result = await _call(gateway, "local:lab:add", a=1)
        assert result.error is not None and result.error.code == "S-TOOL-ORGAN-UNSUPPORTED"
    finally:
        await gateway.aclose()


def _module(folder: Path, name: str, body: str) -> None:
    (folder / f"{name}.py").write_text(textwrap.dedent(body), encoding="utf-8")


ORGAN_MODULE = """
    from colonnade.organs import FunctionOrgan

    organ = FunctionOrgan("echo", version="1.0.0", description="Echoes.", division="testing",
                          subsystem="echo", tags=["testing", "echo", "static"])

    @organ.function(tags=["echo", "text"], examples=[{"input": {"text": "a"}}, {"input": {"text": "b"}}],
                    side_effects=[], idempotent=True)
    def say(text: str) -> dict:
        "Say the text back."
        return {"said": text}
    """


async def test_cards_are_served_without_importing_the_module(tmp_path: Path) -> None:
    module = f"echo_organ_{tmp_path.name.replace('-', '_')}"
    _module(tmp_path, module, ORGAN_MODULE)
    sys.path.insert(0, str(tmp_path))
    try:
        import importlib

        echo = importlib.import_module(module).organ
        cards = tmp_path / "cards"
        write_cards(echo.describe().model_copy(update={"entrypoint": f"{module}:organ"}), cards)
        del sys.modules[module]  # from here on, only the cards know the organ
    finally:
        sys.path.remove(str(tmp_path))
    settings = Settings(data_dir=tmp_path, organs=OrganSettings(cards=[cards], import_paths=[tmp_path]))
    gateway = Gateway(settings)
    try:
        assert gateway.catalog.get("local:echo:say") is not None
        assert module not in sys.modules and not gateway.executive.host.loaded("echo")
        assert [m.function.op for m in gateway.executive.search_functions("echo the text back")] == ["say"]
        assert module not in sys.modules  # searching reads the index, not the module
        result = await _call(gateway, "local__echo__say", text="hi")
        assert result.status == "success" and result.output == {"said": "hi"}
        assert module in sys.modules and gateway.executive.host.loaded("echo")
    finally:
        await gateway.aclose()
        sys.modules.pop(module, None)


async def test_stale_cards_are_reported_on_the_call(tmp_path: Path) -> None:
    cards = write_lab_cards(tmp_path / "cards")
    data = (cards / "organ.json").read_text(encoding="utf-8").replace('"name": "add"', '"name": "subtract"')
    (cards / "organ.json").write_text(data, encoding="utf-8")
    (cards / "organ.toml").unlink()
    gateway = Gateway(Settings(data_dir=tmp_path, organs=OrganSettings(cards=[cards], import_paths=[ROOT])))
    try:
        result = await _call(gateway, "local:lab:subtract", a=1)
        assert result.error is not None and result.error.code == "S-TOOL-ORGAN-LOAD"
        assert "no longer answers subtract listed in its card" in result.error.message
    finally:
        await gateway.aclose()


def test_an_invalid_card_stops_the_gateway_with_every_finding(tmp_path: Path) -> None:
    cards = write_lab_cards(tmp_path / "cards")
    data = (
        (cards / "organ.json")
        .read_text(encoding="utf-8")
        .replace('"idempotent": true', '"idempotent": "yes"')
    )
    (cards / "organ.json").write_text(data, encoding="utf-8")
    with pytest.raises(OrganCardsInvalid, match="ORG008 /functions/0/idempotent"):
        Gateway(Settings(data_dir=tmp_path, organs=OrganSettings(cards=[cards])))


def test_an_organ_that_runs_only_as_a_sidecar_is_not_embedded(tmp_path: Path) -> None:
    card = lab.describe().model_copy(
        update={"execution_modes": ["sidecar"], "entrypoint": "tests.support.organs:lab"}
    )
    write_cards(card, tmp_path / "cards")
    with pytest.raises(OrganLoadError, match=r"organ .lab. runs only as sidecar .*`colonnade organ serve`"):
        Gateway(Settings(data_dir=tmp_path, organs=OrganSettings(cards=[tmp_path / "cards"])))


async def test_pathways_are_tools_as_strong_as_their_strongest_step(tmp_path: Path) -> None:
    organs = OrganSettings(
        cards=[VAULT_CARDS],
        tenant="acme",
        import_paths=[ROOT],
        pathways=[ROOT / "examples/organs/pathways.yaml"],
    )
    gateway = Gateway(Settings(data_dir=tmp_path, organs=organs))
    try:
        file_and_find = gateway.catalog.get("acme:pathway:file_and_find_similar")
        read_and_forget = gateway.catalog.get("acme:pathway:read_and_forget")
        assert file_and_find is not None and read_and_forget is not None
        assert file_and_find.side_effects is SideEffects.WRITE and not file_and_find.requires_human_approval
        assert (
            read_and_forget.side_effects is SideEffects.DESTRUCTIVE
            and read_and_forget.requires_human_approval
        )
        assert file_and_find.input_schema == gateway.catalog.get("acme:vault:store").input_schema  # type: ignore[union-attr]
        result = await _call(
            gateway, "acme__pathway__file_and_find_similar", key="n.txt", content="overdue invoice"
        )
        assert result.status == "success", result.error
        assert result.output["output"]["matches"][0]["key"] == "n.txt"
        assert [s["op"] for s in result.output["steps"]] == ["vault.store", "vault.similarity.search"]
        gated = await _call(gateway, "acme:pathway:read_and_forget", key="n.txt")
        assert gated.error is not None and gated.error.code == "P-PRECOND-APPROVAL-REQUIRED"
    finally:
        await gateway.aclose()


async def test_a_failing_pathway_step_fails_the_call_and_names_the_step(tmp_path: Path) -> None:
    pathways = tmp_path / "pathways.yaml"
    pathways.write_text(
        "pathways:\n  - name: read_twice\n    description: Read, then read the key again.\n    steps:\n"
        "      - op: vault.retrieve\n      - op: vault.retrieve\n        map: {key: /key}\n",
        encoding="utf-8",
    )
    organs = OrganSettings(cards=[VAULT_CARDS], tenant="acme", import_paths=[ROOT], pathways=[pathways])
    gateway = Gateway(Settings(data_dir=tmp_path, organs=organs))
    try:
        result = await _call(gateway, "acme:pathway:read_twice", key="missing.txt")
        assert result.error is not None and result.error.code == "I-REQ-UPSTREAM-NOT-FOUND"
        assert result.error.details["step"] == 0 and result.error.details["op"] == "vault.retrieve"
        assert result.error.message.startswith("step 0 (vault.retrieve) failed: ")
    finally:
        await gateway.aclose()


async def test_an_idempotency_key_replays_an_organ_call(tmp_path: Path) -> None:
    cards = write_lab_cards(tmp_path / "cards")
    settings = Settings(data_dir=tmp_path, organs=OrganSettings(cards=[cards], import_paths=[ROOT]))
    gateway = await Gateway.open(settings)
    try:
        RECEIVED.clear()
        keyed = CallConstraints(idempotency_key="wait-once")
        first = await _call(gateway, "local:lab:wait", keyed, seconds=0)
        second = await _call(gateway, "local:lab:wait", keyed, seconds=0)
        assert first.status == second.status == "success" and second.output == first.output
        assert RECEIVED == [("wait", {"seconds": 0.0})]  # the side-effectful function ran once
    finally:
        await gateway.aclose()
