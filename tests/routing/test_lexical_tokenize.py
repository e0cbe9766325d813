"""The analyzer: identifiers split into words, stopwords dropped, words stemmed."""

from __future__ import annotations

import pytest

from colonnade.routing.tokenize import Analyzer, split_identifier


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("getWeatherForecast", ["get", "Weather", "Forecast"]),
        ("list_open_issues", ["list", "open", "issues"]),
        ("get-station-code-by-names", ["get", "station", "code", "by", "names"]),
        ("fs.read_file", ["fs", "read", "file"]),
        ("HTTPServerStatus", ["HTTP", "Server", "Status"]),
        ("getCO2Emissions", ["get", "CO2", "Emissions"]),
        ("acme:crm:search_customers", ["acme", "crm", "search", "customers"]),
        ("Zürich café", ["Zürich", "café"]),
        ("base64Encode", ["base64", "Encode"]),
    ],
)
def test_identifiers_split_into_words(text: str, words: list[str]) -> None:
    assert split_identifier(text) == words


def test_ideographs_become_one_word_each() -> None:
    assert split_identifier("必应搜索 API") == ["必", "应", "搜", "索", "API"]


def test_terms_are_lower_cased_and_stemmed_alike_for_identifiers_and_prose() -> None:
    analyzer = Analyzer()
    assert analyzer.terms("getWeatherForecasts") == analyzer.terms("get the weather forecast")
    assert analyzer.terms("Analyzing evidences") == analyzer.terms("analyze evidence")


def test_document_stopwords_are_dropped() -> None:
    assert Analyzer().terms("the list of the invoices") == ["list", "invoic"]


def test_query_boilerplate_is_dropped_from_queries_only() -> None:
    analyzer = Analyzer()
    query = "Could you please help me find my latest invoices?"
    assert analyzer.query_terms(query) == ["find", "latest", "invoic"]
    assert "pleas" in analyzer.terms(query)


def test_words_keep_the_surface_form_next_to_the_stem() -> None:
    assert Analyzer().words("Refunding invoices") == [("refunding", "refund"), ("invoices", "invoic")]
