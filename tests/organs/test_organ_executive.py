"""The executive: listing, search by meaning (the router's index), checks before sending, and pathways."""

from __future__ import annotations

from pathlib import Path

import pytest

from colonnade.organs import Executive, OrganHost, PathwayStep, StimulusContext
from colonnade.organs.card_loading import load_card
from colonnade.organs.organ_errors import PathwayError
from colonnade.organs.pathways import load_pathways
from examples.organs.vault import organ as vault
from tests.support.organs import RECEIVED, lab
from tests.support.repo import ROOT


@pytest.fixture
def executive(tmp_path: Path) -> Executive:
    return Executive.standalone(OrganHost(organs=[vault, lab], data_dir=tmp_path), tenant="acme")


def test_list_functions_and_tags(executive: Executive) -> None:
    listed = {f.tool: f for f in executive.list_functions()}
    assert "acme:vault:similarity.search" in listed and "acme:lab:add" in listed
    delete = listed["acme:vault:delete"]
    assert (delete.organ, delete.op, delete.side_effects, delete.idempotent) == (
        "vault",
        "delete",
        "destructive",
        True,
    )
    assert [f.op for f in executive.functions_with_tag("blobs")] == ["store", "retrieve", "delete"]
    assert [f.tool for f in executive.functions_with_tag("similarity")] == ["acme:vault:similarity.search"]
    assert executive.functions_with_tag("no-such-tag") == []


@pytest.mark.parametrize(
    ("query", "best"),
    [
        ("erase a blob", "delete"),  # no card says 'erase': the index's synonyms do
        ("removing blobs", "delete"),  # stemming: 'removing' is not in any card either
        ("look up similar documents", "similarity.search"),
        ("sum of two numbers", "add"),
    ],
)
def test_search_functions_by_meaning(executive: Executive, query: str, best: str) -> None:
    found = executive.search_functions(query, k=3)
    assert found and found[0].function.op == best
    # Scores are fused signals in [0, 1]; the dense signal (colonnade[dense]) has a fixed scale, so
    # the best need not score exactly 1.0, but it must score clearly above nothing.
    assert 0.5 < found[0].score <= 1.0 and found[0].matched_terms
    assert [m.score for m in found] == sorted((m.score for m in found), reverse=True)


def test_search_with_nothing_to_find(executive: Executive) -> None:
    assert executive.search_functions("   ") == []
    assert executive.search_functions("zebra quantum xylophone") == []


def test_get_organ_card(executive: Executive) -> None:
    assert executive.get_organ_card("vault") == vault.describe()
    with pytest.raises(KeyError, match="no organ named 'liver'"):
        executive.get_organ_card("liver")


def test_validate_stimulus_checks_the_schema(executive: Executive) -> None:
    assert executive.validate_stimulus("vault", "store", {"key": "a", "content": "b"}) == []
    problems = executive.validate_stimulus("vault", "store", {"key": "", "extra": 1})
    assert [v.pointer for v in problems] == ["", ""] or len(problems) >= 2
    assert any("content" in v.message for v in problems)
    assert executive.validate_stimulus("lab", "add", {"a": "one"})[0].pointer == "/a"
    assert (
        executive.validate_stimulus("vault", "shred", {})[0].message
        == "organ 'vault' has no operation 'shred'"
    )


async def test_stimulate_organ_never_sends_a_bad_stimulus(executive: Executive) -> None:
    RECEIVED.clear()
    bad = await executive.stimulate_organ("lab", "add", {"a": 1, "b": 5000})
    assert bad.error is not None and bad.error.code == "InvalidInput"
    assert bad.error.details["violations"][0]["pointer"] == "/b"
    unknown = await executive.stimulate_organ("lab", "multiply", {"a": 1})
    assert unknown.error is not None and unknown.error.code == "UnsupportedOperation"
    assert RECEIVED == []
    good = await executive.stimulate_organ("lab", "add", {"a": 1, "b": 2})
    assert good.ok and good.output == {"total": 3} and RECEIVED == [("add", {"a": 1, "b": 2})]


async def test_each_organ_gets_its_own_data_folder(executive: Executive, tmp_path: Path) -> None:
    await executive.stimulate_organ("vault", "store", {"key": "k", "content": "v"})
    assert (tmp_path / "vault" / "vault.db").is_file()


async def test_a_pathway_feeds_each_output_into_the_next_step(executive: Executive) -> None:
    await executive.stimulate_organ(
        "vault", "store", {"key": "old.txt", "content": "invoice for acme overdue"}
    )
    result = await executive.pathway(
        ["vault.store", {"op": "vault.similarity.search", "map": {"query": "$input/content", "k": "/size"}}],
        {"key": "new.txt", "content": "overdue invoice"},
    )
    assert result.ok and result.failed_step is None and result.error is None
    assert [m["key"] for m in result.output["matches"]][:2] == ["new.txt", "old.txt"]
    assert [(s.index, s.op, s.ok) for s in result.steps] == [
        (0, "vault.store", True),
        (1, "vault.similarity.search", True),
    ]
    assert result.latency_ms >= sum(s.latency_ms for s in result.steps) * 0.99
    assert result.cpu_ms > 0


async def test_a_pathway_stops_at_the_first_failure_and_names_its_step(executive: Executive) -> None:
    RECEIVED.clear()
    result = await executive.pathway(
        [
            PathwayStep(op="lab.add"),
            PathwayStep(op="lab.refuse", map={"why": "/total"}),
            PathwayStep(op="lab.add"),
        ],
        {"a": 1, "b": 1},
    )
    assert result.ok is False and result.failed_step == 1
    assert (
        result.error is not None and result.error.code == "InvalidInput"
    )  # /total is a number, why a string
    assert [s.ok for s in result.steps] == [True, False]
    assert RECEIVED == [("add", {"a": 1, "b": 1})]  # the third step never ran
    refused = await executive.pathway(
        [{"op": "lab.add", "map": {"a": "$input/a"}}, {"op": "lab.refuse", "map": {"why": "$input/why"}}],
        {"a": 1, "why": "locked"},
    )
    assert refused.failed_step == 1 and refused.error is not None and refused.error.code == "Conflict"
    missing = await executive.pathway([{"op": "lab.add", "map": {"a": "/nope"}}], {"a": 1})
    assert missing.failed_step == 0 and missing.error is not None
    assert "/nope is not in the previous output" in missing.error.message


async def test_pathway_costs_add_up() -> None:
    from colonnade.organs import FunctionOrgan

    priced = FunctionOrgan(
        "priced", version="1.0.0", description="d", division="x", subsystem="y", tags=["a", "b", "c"]
    )

    @priced.function(tags=["a", "b"], examples=[], side_effects=[], idempotent=True, cost=0.25)
    def double(n: int) -> dict[str, int]:
        """Double n."""
        return {"n": 2 * n}

    executive = Executive.standalone(OrganHost(organs=[priced]))
    result = await executive.pathway(["priced.double", "priced.double", "priced.double"], {"n": 1})
    assert result.output == {"n": 8} and result.cost == 0.75


async def test_a_pathway_step_keeps_a_distinct_idempotency_key(executive: Executive) -> None:
    seen: list[str | None] = []

    class Recorder:
        def describe(self):  # type: ignore[no-untyped-def]
            return lab.describe()

        async def stimulate(self, stimulus):  # type: ignore[no-untyped-def]
            seen.append(stimulus.context.idempotency_key)
            return await lab.stimulate(stimulus)

    recording = Executive.standalone(OrganHost(organs=[Recorder()]))  # type: ignore[list-item]
    steps = ["lab.add", {"op": "lab.add", "map": {"a": "/total"}}]
    result = await recording.pathway(steps, {"a": 1}, StimulusContext(idempotency_key="k1"))
    assert result.ok and result.output == {"total": 1}
    assert seen == ["k1#step0", "k1#step1"]


def test_pathway_files_are_checked_against_the_served_organs(tmp_path: Path) -> None:
    host = OrganHost([load_card(ROOT / "examples" / "organs" / "vault" / "cards")])
    shipped = load_pathways([ROOT / "examples" / "organs" / "pathways.yaml"], host)
    assert [p.name for p in shipped] == ["file_and_find_similar", "read_and_forget"]
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "pathways:\n"
        "  - name: broken\n    description: d\n    tags: [Bad_Tag]\n"
        "    steps:\n      - op: vault.shred\n      - op: liver.filter\n        map: {x: 'nope'}\n",
        encoding="utf-8",
    )
    with pytest.raises(PathwayError) as caught:
        load_pathways([bad], host)
    text = str(caught.value)
    assert "pathways/0 (broken): steps/0: vault.shred is not an operation of a served organ" in text
    assert "no organ named 'liver' is served" in text
    assert "steps/1/map/x: 'nope' is not '/pointer' nor '$input/pointer'" in text
    assert "tag 'Bad_Tag' is not lowercase and hyphenated" in text
