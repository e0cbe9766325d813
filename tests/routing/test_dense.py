"""The dense signal: static embeddings, their scaling, and how the index uses and keeps them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from colonnade.routing import IndexConfig, ToolDoc, ToolIndex
from colonnade.routing.corpus import ToolCorpus
from colonnade.routing.dense import SIMILARITY_SCALE, StaticEmbedder, load_embedder, normalized_similarity
from colonnade.routing.documents import dense_text
from colonnade.routing.fusion import FusionWeights
from colonnade.routing.index import IndexLoadError
from colonnade.routing.router import NO_WORD_NOTE, WORD_SHARE, Router

# Concept axes of a toy embedding: a word counts on the axis of its group.
CONCEPTS = (
    ("weather", "forecast", "rain", "umbrella", "sunny"),
    ("file", "write", "save", "notes", "disk"),
    ("invoice", "refund", "money", "price", "pay"),
    ("email", "mail", "message", "inbox", "send"),
)


class ToyEmbedder:
    """Texts to unit vectors on four concept axes; stands in for a real model in unit tests."""

    def __init__(self, model_id: str = "toy/1") -> None:
        self.model_id = model_id
        self.dim = len(CONCEPTS)
        self.calls: list[list[str]] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().replace("?", " ").replace(".", " ").split():
                for axis, group in enumerate(CONCEPTS):
                    out[row, axis] += word in group
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return np.divide(out, norms, out=out, where=norms > 0)


TOOLS = [
    ToolDoc("w:forecast", "get_forecast", description="Weather forecast for a city", server="weather"),
    ToolDoc("f:write", "write_file", description="Write text to a file on disk", server="files"),
    ToolDoc("b:refund", "refund_invoice", description="Refund a paid invoice", server="billing"),
    ToolDoc("m:send", "send_email", description="Send an email message", server="mail"),
]
DENSE = IndexConfig(fusion=FusionWeights(query=1.0, clause=2.0, dense=1.0, domain=0.0))


def _index(
    docs: list[ToolDoc] = TOOLS, config: IndexConfig = DENSE, embedder: ToyEmbedder | None = None
) -> ToolIndex:
    index = ToolIndex(config, embedder=embedder or ToyEmbedder())
    index.upsert(docs)
    return index


def test_scaled_similarity_measures_from_the_mean_in_fixed_units() -> None:
    scaled = normalized_similarity(np.array([0.2, 0.4, 0.6, 0.4]))  # mean 0.4
    assert scaled.tolist() == pytest.approx([0.0, 0.0, 0.2 / SIMILARITY_SCALE, 0.0])
    assert normalized_similarity(np.array([-0.9, 0.9])).tolist() == [0.0, 1.0]  # at most 1
    assert normalized_similarity(np.array([0.5, 0.5])).tolist() == [0.0, 0.0]
    assert normalized_similarity(np.zeros(0)).shape == (0,)


def test_a_static_embedder_averages_token_vectors_to_unit_length() -> None:
    class Tokens:
        def __init__(self, ids: list[int]) -> None:
            self.ids = ids

    class Tokenizer:
        def encode(self, sequence: str, pair: None = None, is_pretokenized: bool = False,
                   add_special_tokens: bool = True) -> Tokens:  # fmt: skip
            return Tokens([{"a": 0, "b": 1}[w] for w in sequence.split() if w in "ab"])

        def encode_batch(self, input: list[str], is_pretokenized: bool = False,
                         add_special_tokens: bool = True) -> list[Tokens]:  # fmt: skip
            return [self.encode(text) for text in input]

    table = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    embedder = StaticEmbedder(table, Tokenizer(), "test")
    vectors = embedder.embed(["a", "a b", "zzz"])
    assert vectors[0].tolist() == pytest.approx([1.0, 0.0])
    assert vectors[1].tolist() == pytest.approx([2**-0.5, 2**-0.5])
    assert vectors[2].tolist() == [0.0, 0.0]  # nothing known: a zero vector, not NaN
    mixed = embedder.embed(["zzz", "b", "zzz", "zzz", "a b", "a"])  # texts without tokens in between
    assert mixed.tolist() == [[0.0, 0.0], [0.0, 1.0], [0.0, 0.0], [0.0, 0.0], vectors[1].tolist(), [1.0, 0.0]]
    assert embedder.embed([]).shape == (0, 2)
    many = [f"a b {i}" for i in range(100)]  # a catalog-sized batch goes through encode_batch
    assert embedder.embed(many).tolist() == [vectors[1].tolist()] * 100


def test_dense_finds_a_tool_that_shares_no_word_with_the_request() -> None:
    request = "umbrella or disk"  # "disk" is a word of the file writer; nothing names the forecast
    assert [h.id for h in _index(config=IndexConfig(dense=False)).search(request)] == ["f:write"]
    by_id = {h.id: h for h in _index().search(request)}
    assert set(by_id) == {"f:write", "w:forecast"}
    assert by_id["w:forecast"].lexical == 0.0
    assert by_id["w:forecast"].dense is not None and by_id["w:forecast"].dense > 0


def test_a_request_sharing_no_word_with_the_catalog_finds_nothing() -> None:
    """Every string has subword vectors; dense similarity alone would rank noise."""
    embedder = ToyEmbedder()
    index = _index(embedder=embedder)
    embedder.calls.clear()
    assert index.search("zzqxv umbrella wwyk") == []
    assert embedder.calls == []


def test_the_query_and_all_its_clauses_are_embedded_in_one_call() -> None:
    embedder = ToyEmbedder()
    index = _index(embedder=embedder)
    embedder.calls.clear()
    index.search("Check the rain forecast for Oslo. Then pay the invoice, and mail the team")
    assert len(embedder.calls) == 1 and len(embedder.calls[0]) == 3  # its three clauses, in one batch


def test_tool_vectors_are_computed_when_tools_are_indexed_not_per_query() -> None:
    embedder = ToyEmbedder()
    index = _index(embedder=embedder)
    assert sum(len(call) for call in embedder.calls) == len(TOOLS)
    index.search("weather")
    index.search("refund")
    assert sum(len(call) for call in embedder.calls) == len(TOOLS) + 2


def test_without_a_dense_weight_no_query_is_embedded() -> None:
    embedder = ToyEmbedder()
    index = _index(config=IndexConfig(fusion=FusionWeights(dense=0.0)), embedder=embedder)
    embedder.calls.clear()
    hits = index.search("weather forecast")
    assert embedder.calls == [] and hits[0].dense is None


def test_vectors_are_saved_with_the_index_and_tied_to_their_model(tmp_path: Path) -> None:
    index = _index()
    index.remove(["m:send"])
    path = tmp_path / "tools.npz"
    index.save(path)
    loaded = ToolIndex.load(path, DENSE, embedder=ToyEmbedder())
    request = "Will I need an umbrella tomorrow? Save my notes."
    assert [(h.id, h.score) for h in loaded.search(request)] == [
        (h.id, h.score) for h in index.search(request)
    ]
    with pytest.raises(IndexLoadError, match="dense model"):
        ToolIndex.load(path, DENSE, embedder=ToyEmbedder("toy/2"))
    with pytest.raises(IndexLoadError, match="dense model"):
        ToolIndex.load(path, IndexConfig(dense=False))


def test_an_index_saved_with_float16_vectors_loads_and_ranks_as_before(tmp_path: Path) -> None:
    """Indexes saved before the int8 codes stored float16 unit vectors: they still load, as the
    codes a fresh index holds, so an upgrade does not rebuild or re-rank anything."""
    embedder = ToyEmbedder()
    index = _index(embedder=embedder)
    path = tmp_path / "tools.npz"
    index.save(path)
    with np.load(path) as stored:
        arrays = {name: stored[name] for name in stored.files if not name.startswith("dense_")}
    rows = json.loads(arrays["header"].tobytes())["ids"]  # the order of the stored rows
    by_id = {doc.id: doc for doc in TOOLS}
    arrays["dense_vectors"] = embedder.embed([dense_text(by_id[i]) for i in rows]).astype(np.float16)
    np.savez(path, **arrays)
    loaded = ToolIndex.load(path, DENSE, embedder=ToyEmbedder())
    for request in ("Will I need an umbrella?", "refund my money and mail the receipt"):
        assert [(h.id, h.score) for h in loaded.search(request)] == [
            (h.id, h.score) for h in index.search(request)
        ]


def test_with_dense_on_incremental_updates_still_rank_like_a_rebuild() -> None:
    config = IndexConfig(fusion=DENSE.fusion, delta_limit=1, delta_ratio=0.0)
    live = _index(TOOLS[:2], config)
    live.upsert(TOOLS[2:])
    live.remove(["f:write"])
    live.upsert([TOOLS[1]])
    rebuilt = _index(TOOLS, config)
    for request in ("Will I need an umbrella?", "refund my money and mail the receipt", "save notes"):
        assert [(h.id, h.score) for h in live.search(request)] == [
            (h.id, h.score) for h in rebuilt.search(request)
        ]


@pytest.fixture(scope="module")
def installed() -> StaticEmbedder:
    embedder = load_embedder()
    if embedder is None:
        pytest.skip("no dense model installed: `pip install colonnade[dense]` (make install does it)")
    return embedder


def test_the_installed_static_model_places_related_requests_together(installed: StaticEmbedder) -> None:
    forecast, umbrella, delete = installed.embed(
        ["weather forecast for a city", "will it rain in Paris tomorrow", "delete a file from the disk"]
    )
    assert installed.dim == 256
    assert float(np.linalg.norm(forecast)) == pytest.approx(1.0, abs=1e-5)
    assert float(forecast @ umbrella) > float(forecast @ delete)


def test_the_default_index_uses_the_installed_model(installed: StaticEmbedder) -> None:
    index = ToolIndex()
    assert index.embedder is installed
    assert ToolIndex(IndexConfig(dense=False)).embedder is None


def test_a_best_tool_found_by_one_signal_alone_is_never_fully_sure() -> None:
    """Among four tools any hit stands out; found by meaning alone (or a word alone), it must not
    read confidence 1.00."""
    config = IndexConfig(fusion=FusionWeights(query=1.0, clause=1.0, dense=3.0, domain=0.0))
    corpus = ToolCorpus(ToolIndex(config, embedder=ToyEmbedder()))
    corpus.upsert(TOOLS)
    router = Router(corpus)
    by_meaning = router.route("umbrella sunny rain disk")  # only "disk" is a word of the catalog
    assert by_meaning.selected[0] == "w:forecast"
    assert "matched" not in by_meaning.reasons["w:forecast"][0]
    assert 0 < by_meaning.confidence <= 1.0 - WORD_SHARE
    assert by_meaning.confidence_note == NO_WORD_NOTE
    by_word = router.route("umbrella or disk")  # the writer matches "disk", and is like it in meaning
    assert by_word.selected[0] == "f:write" and by_word.confidence_note == ""
    assert WORD_SHARE < by_word.confidence < 1.0
    both = router.route("write notes to disk")
    assert both.selected[0] == "f:write" and both.confidence == 1.0
