"""Query preparation: references rewritten as words, requests split into clauses."""

from __future__ import annotations

import pytest

from colonnade.routing.query import normalize_references, split_clauses


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("summarise https://www.youtube.com/watch?v=arj7oStGLkU now", "summarise youtube url now"),
        ("write it to /root/notes/today.md please", "write it to today md file please"),
        ("back up '/home/user/data' tonight", "back up ' data directory ' tonight"),
        ("is amaz0n.com legit?", "is amaz0n domain legit?"),
        ("whois www.baidu.com.", "whois baidu domain ."),
        ("mail bob@example.com the report", "mail email the report"),
        ("open reports/2024/q1.xlsx", "open q1 xlsx file"),
    ],
)
def test_references_become_words_a_tool_description_uses(query: str, expected: str) -> None:
    assert " ".join(normalize_references(query).split()) == expected


def test_plain_text_and_slashed_words_are_left_alone() -> None:
    text = "compare DNA/RNA results in Philosophy/Ethics, rated 4.5 stars"
    assert normalize_references(text) == text


def test_a_sentence_ending_after_a_path_still_ends() -> None:
    clauses = split_clauses(normalize_references("Save it to /root/code/app.ts. Then run the tests."))
    assert len(clauses) == 2
    assert " ".join(clauses[0].split()) == "Save it to app ts file write ."


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("save it to /root/code/app.ts", "save it to app ts file write"),
        ("generate a report at /root/markdown/daily.md", "generate a report at daily md file write"),
        ("export the table as 'out/table.csv'", "export the table as ' table csv file write '"),
        # no output action, or one that is not about this path: the path stays a plain reference
        ("summarise /root/notes/today.md", "summarise today md file"),
        ("clean the data stored in 'data/sample.txt'", "clean the data stored in ' sample txt file '"),
        ("Create a summary. Read the notes in /in/a.md", "Create a summary. Read the notes in a md file"),
        ("save everything to /home/user/backup/", "save everything to backup directory"),
        # the request already says "write": nothing to add
        ("write a tutorial in markdown at /root/md/antd.md", "write a tutorial in markdown at antd md file"),
    ],
)
def test_a_file_the_request_saves_to_brings_the_word_write(query: str, expected: str) -> None:
    assert " ".join(normalize_references(query).split()) == expected


def test_requests_split_at_sentences_and_linking_words() -> None:
    query = (
        "Find the SLA of the compute service. Additionally, back up my data to the cloud, "
        "and then update the shipment details; finally email the team about it"
    )
    assert split_clauses(query) == [
        "Find the SLA of the compute service.",
        "Additionally, back up my data to the cloud",
        "update the shipment details;",
        "finally email the team about it",
    ]


def test_short_fragments_join_their_neighbour() -> None:
    assert split_clauses("Thanks. Please get the weather forecast for Oslo. And today.") == [
        "Thanks. Please get the weather forecast for Oslo. And today."
    ]
    assert split_clauses("weather in Oslo") == ["weather in Oslo"]
    assert split_clauses("") == [""]
