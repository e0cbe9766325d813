"""The routing query built from a conversation, and the word matching behind 'the query names X'."""

from __future__ import annotations

from colonnade.routing.context import Message, build_query, message_text, names, words


def test_an_explicit_query_is_used_as_given() -> None:
    assert build_query("  refund invoice INV-1  ") == "refund invoice INV-1"


def test_the_latest_user_message_leads_and_counts_twice() -> None:
    query = build_query(
        [
            {"role": "user", "content": "Find customer Ada"},
            {"role": "assistant", "content": "Ada Lovelace, C-1001."},
            {"role": "user", "content": "Now invoice her"},
        ]
    )
    assert query.splitlines() == [
        "Now invoice her",
        "Now invoice her",
        "Ada Lovelace, C-1001.",
        "Find customer Ada",
    ]


def test_only_recent_spoken_turns_count_and_long_ones_are_cut() -> None:
    long_reply = " ".join(f"word{i}" for i in range(100))
    messages = [
        Message("user", "very old request"),
        Message("system", "system prompt"),
        Message("assistant", long_reply),
        Message("tool", "raw tool output"),
        Message("user", "latest request"),
    ]
    query = build_query(messages, turns=2, words_per_turn=5)
    lines = query.splitlines()
    assert lines[:2] == ["latest request", "latest request"]
    assert lines[2] == "word0 word1 word2 word3 word4"
    assert "very old" not in query and "system" not in query and "tool output" not in query


def test_the_word_budget_bounds_the_query() -> None:
    messages = [Message("user", " ".join(["alpha"] * 50)), Message("assistant", "beta gamma")]
    assert len(build_query(messages, max_words=30, latest_weight=1).split()) == 30


def test_a_conversation_without_user_turns_still_gives_a_query() -> None:
    assert build_query([Message("assistant", "I can look up invoices")]) == "I can look up invoices"
    assert build_query([]) == ""


def test_message_text_reads_content_blocks() -> None:
    blocks = [
        {"type": "text", "text": "refund"},
        {"type": "image", "data": "..."},
        {"type": "text", "text": "it"},
    ]
    assert message_text(blocks) == "refund it"
    assert message_text(42) == ""


def test_words_split_identifiers_and_fold_plurals() -> None:
    assert words("getCustomerInvoices yahoo-finance 12306") == {
        "get",
        "customer",
        "invoice",
        "yahoo",
        "finance",
        "12306",
    }


def test_a_query_names_an_api_by_its_distinctive_words() -> None:
    query = words("what does the yahoo finance server say about AAPL in the crm")
    assert names(query, "yahoo-finance")
    assert names(query, "acme:crm")  # the owner need not be named
    assert names(query, "org/yahoo-finance-mcp")  # generic words do not count
    assert not names(query, "google-finance")
    assert not names(query, "mcp-server")  # nothing distinctive: never named
    assert names(words("a tutorial for Ant Design"), "Ant Design Components")  # a long name may lose a word
    assert not names(words("a design tutorial"), "Ant Design Components")
