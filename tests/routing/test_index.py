"""ToolIndex: search quality on hand-written tools, updates, filters, ordering, persistence."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from colonnade.catalog import project_contract
from colonnade.contracts.validate import load_contract
from colonnade.routing import IndexConfig, ToolDoc, ToolIndex, doc_from_tool
from colonnade.routing.index import IndexLoadError


def _tool(
    tool_id: str, name: str, text: str, *params: str, server: str = "", summary: str = "", intent: str = "",
    tags: tuple[str, ...] = (),
) -> ToolDoc:  # fmt: skip
    """A document whose `params` are given as "name: description" strings."""
    pairs = tuple((p.split(": ", 1)[0], p.split(": ", 1)[1]) for p in params)
    return ToolDoc(tool_id, name, summary, intent, text, pairs, server, tags)


TOOLS = [
    _tool("weather:get_forecast", "getWeatherForecast", "Weather forecast for a city for the next days",
          "city: City name", "days: Number of days", server="weather"),
    _tool("weather:get_alerts", "get_weather_alerts", "Active severe weather alerts for a region",
          "region: Region code", server="weather"),
    _tool("fs:write_file", "write_file", "Create or overwrite a file with the given content",
          "path: File path", "content: Text to write", server="filesystem"),
    _tool("fs:read_file", "read_file", "Read the contents of a file", "path: File path", server="filesystem"),
    _tool("billing:refund_invoice", "refund_invoice", "", server="acme:billing", tags=("billing",),
          summary="Refund a paid invoice in full", intent="Use when a customer gets their money back"),
    _tool("billing:list_invoices", "list_invoices", "", server="acme:billing", tags=("billing",),
          summary="List invoices of a customer"),
    _tool("mail:send_email", "sendEmail", "Send an e-mail message to a recipient",
          "to: Recipient address", "subject: Subject line", server="mail"),
    _tool("stocks:get_price", "get_stock_price", "Current stock price for a ticker symbol",
          "ticker: Ticker symbol, e.g. AAPL", server="finance"),
]  # fmt: skip


# Most tests here are about the words: the dense signal is off unless a test turns it on
# (tests/routing/test_dense.py covers it).
LEXICAL = IndexConfig(dense=False)


def _index(docs: list[ToolDoc] = TOOLS, config: IndexConfig = LEXICAL) -> ToolIndex:
    index = ToolIndex(config)
    index.upsert(docs)
    return index


@pytest.mark.parametrize(
    ("query", "best"),
    [
        ("What will the weather be like in Paris over the next three days?", "weather:get_forecast"),
        ("Please save this text into notes.txt", "fs:write_file"),
        ("Show me what is inside the file report.md", "fs:read_file"),
        ("The customer wants their money back for invoice 42", "billing:refund_invoice"),
        ("email the report to bob@example.com", "mail:send_email"),
        ("How much does one AAPL share cost right now?", "stocks:get_price"),
    ],
)
def test_the_right_tool_ranks_first(query: str, best: str) -> None:
    assert _index().search(query, k=3)[0].id == best


def test_each_part_of_a_multi_tool_request_finds_its_tool() -> None:
    query = "Get the weather forecast for Oslo. Then write it to a file. Finally email it to my boss."
    top3 = {hit.id for hit in _index().search(query, k=3)}
    assert top3 == {"weather:get_forecast", "fs:write_file", "mail:send_email"}


def test_a_result_saved_to_a_path_finds_the_file_writer() -> None:
    """"save" and "generate" name other tools; the output path is what asks for a file writer."""
    decoys = [
        _tool("ppt:save_presentation", "save_presentation", "Save the current presentation to disk",
              "file_name: Name of the presentation", server="ppt"),
        _tool("chart:generate_report", "generate_report", "Generate a report chart of sales figures",
              "data: Sales rows", server="chart"),
        _tool("web:search_news", "search_news", "Search news articles about a company or a coin",
              "query: Search words", server="news"),
    ]  # fmt: skip
    query = "Search news on bitcoin, generate a sales report and save it to /root/out/bitcoin.md"
    top3 = [hit.id for hit in _index([*TOOLS, *decoys]).search(query, k=3)]
    assert "fs:write_file" in top3


def test_hits_explain_which_query_words_matched() -> None:
    hit = _index().search("severe weather alerts in the region", k=1)[0]
    assert hit.id == "weather:get_alerts"
    assert set(hit.matched_terms) == {"severe", "weather", "alerts", "region"}
    assert hit.score == hit.lexical == 1.0
    assert hit.dense is None


def test_scores_lie_between_zero_and_one_best_first() -> None:
    hits = _index().search("Get the weather forecast. Then write it to a file.", k=8)
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    assert all(0.0 < s <= 1.0 for s in scores)
    assert all(h.lexical is not None and 0.0 <= h.lexical <= 1.0 for h in hits)


def test_nothing_matching_returns_nothing() -> None:
    index = _index()
    assert index.search("zyzzyva quux") == []
    assert index.search("weather", k=0) == []
    assert ToolIndex().search("weather") == []


def test_allowed_restricts_candidates() -> None:
    index = _index()
    hits = index.search(
        "weather forecast alerts file", k=10, allowed={"fs:read_file", "weather:get_alerts", "nope"}
    )
    assert {h.id for h in hits} == {"fs:read_file", "weather:get_alerts"}
    assert index.search("weather", allowed=set()) == []


def test_ties_are_broken_by_id() -> None:
    twins = [ToolDoc(f"echo:{suffix}", "echo", description="Echo the input") for suffix in "dbca"]
    hits = _index(twins).search("echo input", k=4)
    assert [h.id for h in hits] == ["echo:a", "echo:b", "echo:c", "echo:d"]
    assert len({h.score for h in hits}) == 1


def test_upsert_replaces_a_document_with_the_same_id() -> None:
    index = _index()
    index.upsert([ToolDoc("mail:send_email", "send_sms", description="Send a text message to a phone")])
    assert len(index) == len(TOOLS)
    assert index.search("send a text message to a phone", k=1)[0].id == "mail:send_email"
    assert all(h.id != "mail:send_email" for h in index.search("e-mail recipient subject"))


def test_removed_documents_are_never_returned() -> None:
    index = _index()
    index.remove(["weather:get_forecast", "unknown:id"])
    assert "weather:get_forecast" not in index
    assert len(index) == len(TOOLS) - 1
    assert all(h.id != "weather:get_forecast" for h in index.search("weather forecast city days", k=10))


def test_scores_of_every_row_agree_with_search() -> None:
    index = _index()
    index.remove(["weather:get_alerts"])
    query = "weather forecast and alerts for Paris, then email it to bob"
    ids, scores = index.scores(query)
    assert len(ids) == len(scores) >= len(index)
    by_id = dict(zip(ids, scores.tolist(), strict=True))
    assert by_id["weather:get_alerts"] == 0.0  # removed rows never score
    hits = index.search(query, k=len(TOOLS))
    assert [h.id for h in hits] == sorted((i for i in by_id if by_id[i] > 0), key=lambda i: (-by_id[i], i))
    assert all(by_id[h.id] == pytest.approx(h.score) for h in hits)
    empty_ids, empty_scores = ToolIndex().scores(query)
    assert empty_ids == [] and empty_scores.shape == (0,)


QUERIES = [
    "weather forecast for a city",
    "write the file content",
    "refund the invoice of a customer. Then send an email about it.",
    "stock price ticker",
    "list invoices and read the file",
]


def _ranked(index: ToolIndex, query: str) -> list[tuple[str, float]]:
    return [(h.id, h.score) for h in index.search(query, k=10)]


def _results(index: ToolIndex) -> list[list[tuple[str, float]]]:
    return [_ranked(index, q) for q in QUERIES]


def test_incremental_updates_rank_exactly_like_a_full_rebuild() -> None:
    rng = random.Random(7)
    docs = {d.id: d for d in TOOLS}
    pool = [
        *TOOLS,
        *(
            ToolDoc(f"extra:{i}", f"tool_{i}", description=f"extra weather file invoice {i}")
            for i in range(12)
        ),
    ]
    live = _index([], IndexConfig(delta_limit=3, delta_ratio=0.0, dense=False))
    current: dict[str, ToolDoc] = {}
    for step in range(60):
        doc = rng.choice(pool)
        if doc.id in current and rng.random() < 0.4:
            live.remove([doc.id])
            del current[doc.id]
        else:
            changed = ToolDoc(doc.id, doc.name, description=f"{doc.description} v{step}", server=doc.server)
            live.upsert([changed])
            current[doc.id] = changed
        if step % 10 == 9:
            rebuilt = _index(list(current.values()))
            assert _results(live) == _results(rebuilt), f"after step {step}"
            assert len(live) == len(rebuilt) == len(current)
    assert docs  # the pool above mixes the hand-written tools with generated ones


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    index = _index()
    index.remove(["fs:read_file"])
    index.upsert([ToolDoc("new:tool", "translate_text", description="Translate text into another language")])
    path = tmp_path / "index" / "tools.npz"
    index.save(path)
    loaded = ToolIndex.load(path, LEXICAL)
    assert len(loaded) == len(index) and "new:tool" in loaded and "fs:read_file" not in loaded
    assert _results(loaded) == _results(index)
    assert loaded.search("translate this text to French", k=1)[0].id == "new:tool"


def test_a_loaded_index_keeps_updating(tmp_path: Path) -> None:
    path = tmp_path / "tools.npz"
    _index(TOOLS[:4]).save(path)
    loaded = ToolIndex.load(path, LEXICAL)
    loaded.upsert(TOOLS[4:])
    assert _results(loaded) == _results(_index())


def test_loading_something_else_says_what_is_wrong(tmp_path: Path) -> None:
    with pytest.raises(IndexLoadError, match="no such file"):
        ToolIndex.load(tmp_path / "missing.npz")
    garbage = tmp_path / "garbage.npz"
    garbage.write_bytes(b"not a zip file")
    with pytest.raises(IndexLoadError, match=r"not a saved tool index.*rebuild it"):
        ToolIndex.load(garbage)
    other = tmp_path / "other.npz"
    np.savez(other, numbers=np.arange(3))
    with pytest.raises(IndexLoadError, match="no header"):
        ToolIndex.load(other)


def test_catalog_tools_are_indexed_under_their_canonical_names(repo_root: Path) -> None:
    tools = [
        *project_contract(load_contract(repo_root / "examples/contracts/crm.yaml")),
        *project_contract(load_contract(repo_root / "examples/contracts/billing.yaml")),
    ]
    index = _index([doc_from_tool(t) for t in tools])
    assert index.search("give the customer their money back for a paid invoice", k=1)[0].id == (
        "acme:billing:refund_invoice"
    )
    assert index.search("change the e-mail address of a customer", k=1)[0].id == "acme:crm:update_customer"


def test_thesaurus_synonyms_bridge_different_words_for_one_action() -> None:
    plain = _index(config=IndexConfig(synonym_weight=0.0, dense=False))
    assert all(h.id != "fs:write_file" for h in plain.search("save my notes", k=3))
    hit = _index(config=IndexConfig(synonym_weight=0.3, dense=False)).search("save my notes", k=1)[0]
    assert hit.id == "fs:write_file"
    assert hit.matched_terms == ("write",)


def test_configure_changes_parameters_without_reindexing() -> None:
    index = _index(config=IndexConfig(synonym_weight=0.3, dense=False))
    before = index.search("save my notes", k=1)
    index.configure(IndexConfig(synonym_weight=0.0, dense=False))
    assert index.search("save my notes", k=1) != before
    assert len(index) == len(TOOLS)


def test_an_emptied_index_saves_loads_and_fills_again(tmp_path: Path) -> None:
    config = IndexConfig(delta_limit=1, delta_ratio=0.0, dense=False)
    index = _index([ToolDoc("a", "the"), ToolDoc("b", "weather")], config)
    assert [h.id for h in index.search("the weather")] == ["b"]  # "a" has no searchable word
    index.remove(["a", "b"])
    assert len(index) == 0 and index.search("weather") == []
    index.save(tmp_path / "empty.npz")
    loaded = ToolIndex.load(tmp_path / "empty.npz", config)
    assert len(loaded) == 0
    loaded.upsert([ToolDoc("c", "weather_now")])
    assert [h.id for h in loaded.search("weather")] == ["c"]


WORDS = ["weather", "file", "invoice", "stock", "price", "email", "report", "city", "save", "list"]
_operation = st.tuples(
    st.sampled_from(["a", "b", "c", "d", "e", "f"]),
    st.one_of(st.none(), st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)),
)


@settings(max_examples=40, deadline=None)
@given(st.lists(_operation, min_size=1, max_size=25))
def test_any_sequence_of_changes_ranks_like_a_rebuild(operations: list[tuple[str, str | None]]) -> None:
    live = ToolIndex(IndexConfig(delta_limit=2, delta_ratio=0.0, dense=False))
    current: dict[str, ToolDoc] = {}
    for tool_id, text in operations:
        if text is None:
            live.remove([tool_id])
            current.pop(tool_id, None)
        else:
            doc = ToolDoc(tool_id, f"tool_{tool_id}", description=text, server=text.split()[0])
            live.upsert([doc])
            current[tool_id] = doc
    rebuilt = _index(list(current.values()))
    for query in ("weather file", "price of a stock. Then email the report", "save the list"):
        assert [(h.id, h.score) for h in live.search(query)] == [
            (h.id, h.score) for h in rebuilt.search(query)
        ]
