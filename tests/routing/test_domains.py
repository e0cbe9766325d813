"""Domain detection: APIs scored as a whole from the catalog's own words, and kept up to date."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from colonnade.routing import IndexConfig, ToolDoc, ToolIndex
from colonnade.routing.domains import DomainIndex
from colonnade.routing.fusion import FusionWeights
from colonnade.routing.lexical import Vocabulary

MAPS = "osm-maps"
TOOLS = [
    ToolDoc("osm:geocode", "geocode_address", description="Coordinates of an address", server=MAPS,
            server_description="OpenStreetMap places, routes and restaurants"),
    ToolDoc("osm:route", "get_route_directions", description="Directions between two points", server=MAPS,
            server_description="OpenStreetMap places, routes and restaurants"),
    ToolDoc("osm:nearby", "search_category", description="Places of a category near a point", server=MAPS,
            server_description="OpenStreetMap places, routes and restaurants"),
    ToolDoc("rail:tickets", "get_tickets", description="Train tickets between two stations", server="rail",
            server_description="Railway timetables"),
    ToolDoc("food:recipe", "find_recipe", description="Recipes of Japanese dishes", server="cooking"),
]  # fmt: skip
REQUEST = "Go from Tokyo Tower to the park, then find a highly rated restaurant nearby and give directions"


def _domains(docs: list[ToolDoc], vocabulary: Vocabulary | None = None) -> tuple[DomainIndex, Vocabulary]:
    vocabulary = vocabulary if vocabulary is not None else Vocabulary()
    domains = DomainIndex(vocabulary)
    for doc in docs:
        labels = f"{doc.server} {doc.server_description}".lower().split()
        domains.add(doc.id, doc.server, labels, doc.name.split("_"))
    return domains, vocabulary


def _query(vocabulary: Vocabulary, text: str) -> tuple[np.ndarray, np.ndarray]:
    ids = np.array(vocabulary.lookup(text.lower().split()), dtype=np.int64)
    return ids, np.ones(len(ids))


def test_the_api_whose_tools_cover_the_request_is_detected() -> None:
    index = ToolIndex(IndexConfig(dense=False))
    index.upsert(TOOLS)
    scores = index.domains(REQUEST)
    assert max(scores, key=scores.__getitem__) == MAPS
    assert scores[MAPS] == 1.0 and all(0 < v < 1 for api, v in scores.items() if api != MAPS)


def test_api_documents_follow_their_tools() -> None:
    domains, vocabulary = _domains(TOOLS)
    assert len(domains) == 3
    assert set(domains.scores(*_query(vocabulary, "tickets"))) == {"rail"}
    domains.remove(["rail:tickets"])
    assert domains.scores(*_query(vocabulary, "tickets")) == {} and len(domains) == 2
    domains.add("rail:tickets", "trains", ["trains"], ["get", "tickets"])
    assert set(domains.scores(*_query(vocabulary, "tickets"))) == {"trains"}
    assert domains.api_of("rail:tickets") == "trains"


def test_an_api_document_does_not_depend_on_the_order_its_tools_came_in() -> None:
    forward, vocabulary = _domains(TOOLS)
    backward, _ = _domains(TOOLS[::-1], vocabulary)
    query = _query(vocabulary, "restaurants directions railway tickets recipes")
    assert forward.scores(*query) == pytest.approx(backward.scores(*query))


def test_the_domain_signal_lifts_the_other_tools_of_the_detected_api() -> None:
    plain = ToolIndex(IndexConfig(dense=False))
    with_domain = ToolIndex(IndexConfig(dense=False, fusion=FusionWeights(clause=2.0, domain=1.0)))
    for index in (plain, with_domain):
        index.upsert(TOOLS)
    plain_scores = {h.id: h.score for h in plain.search(REQUEST, k=5)}
    hits = with_domain.search(REQUEST, k=5)
    scores = {h.id: h.score for h in hits}
    # the map tools fit the request as a whole better than the recipe finder, which shares "find"
    for tool in ("osm:nearby", "osm:geocode"):
        assert scores[tool] / scores["food:recipe"] > plain_scores[tool] / plain_scores["food:recipe"]
    assert {h.id: h.domain for h in hits}["osm:route"] == 1.0


def test_a_loaded_index_detects_the_same_domains(tmp_path: Path) -> None:
    index = ToolIndex(IndexConfig(dense=False))
    index.upsert(TOOLS)
    index.remove(["food:recipe"])
    index.save(tmp_path / "tools.npz")
    loaded = ToolIndex.load(tmp_path / "tools.npz", IndexConfig(dense=False))
    assert loaded.domains(REQUEST) == pytest.approx(index.domains(REQUEST))
    assert "cooking" not in loaded.domains("japanese recipes and restaurants")
