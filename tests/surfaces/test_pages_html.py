"""The HTML builder escapes every value it is given; only its own output passes through."""

from __future__ import annotations

import pytest

from colonnade.surfaces.pages.html import Html, join, separated, tag, text


def test_children_and_attribute_values_are_escaped() -> None:
    built = tag("a", "<b>&</b>", href='/x?a=1&b="2"', title="it's")
    assert built == '<a href="/x?a=1&amp;b=&quot;2&quot;" title="it&#x27;s">&lt;b&gt;&amp;&lt;/b&gt;</a>'


def test_markup_from_the_builder_is_kept_but_concatenated_strings_are_escaped_again() -> None:
    inner = tag("em", "x")
    assert tag("p", inner) == "<p><em>x</em></p>"
    assert tag("p", inner + "<i>") == "<p>&lt;em&gt;x&lt;/em&gt;&lt;i&gt;</p>"
    assert tag("p", Html("<i>")) == "<p><i></p>"


def test_attribute_names_and_flags() -> None:
    assert tag("input", type="search", aria_label="q", data_x=3, selected=True, hidden=False, id=None) == (
        '<input type="search" aria-label="q" data-x="3" selected>'
    )
    assert tag("td", class_="num") == '<td class="num"></td>'
    with pytest.raises(ValueError, match="cannot have children"):
        tag("br", "x")


def test_joining_and_separating() -> None:
    assert join("<", None, tag("b", 1), 2.5) == "&lt;<b>1</b>2.5"
    assert separated([tag("a", "x"), "<y>"], " & ") == "<a>x</a> &amp; &lt;y&gt;"
    assert text('"') == "&quot;"
