"""One page of a long per-tool table: a name filter and paging, busiest rows first.

A catalog of thousands of tools would make `/ui/metrics` a table of thousands of rows; the page
shows the top `PAGE_ROWS` of what matches the visitor's filter (`?q=`, a case-insensitive part of
the name) and links to the next and previous pages (`?page=`), keeping the other query fields.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar
from urllib.parse import urlencode

from colonnade.surfaces.pages.html import Child, Html, join, tag

__all__ = ["PAGE_ROWS", "Paged", "filter_form", "paged", "pager", "parse_page"]

PAGE_ROWS = 50
"""Rows of a per-tool table shown at once."""

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Paged(Generic[T]):
    """The rows shown, and where they sit among the rows matching the filter."""

    rows: tuple[T, ...]
    matched: int
    page: int
    """1-based; a page past the last reads as the last."""
    pages: int
    query: str | None

    @property
    def first(self) -> int:
        """The 1-based position of the first row shown (0 when none matched)."""
        return (self.page - 1) * PAGE_ROWS + 1 if self.rows else 0


def parse_page(raw: str | None) -> int | None:
    """A `?page=` value as a page number (1 when absent); None when it is not a positive integer."""
    if raw is None or raw == "":
        return 1
    if not (raw.isascii() and raw.isdigit()) or int(raw) < 1:
        return None
    return int(raw)


def paged(items: Sequence[T], name: Callable[[T], str], query: str | None, page: int) -> Paged[T]:
    """The `page`-th `PAGE_ROWS` of `items` (already in display order) whose name contains `query`."""
    needle = (query or "").strip().casefold()
    matching = [item for item in items if needle in name(item).casefold()] if needle else list(items)
    pages = max(1, -(-len(matching) // PAGE_ROWS))
    page = min(page, pages)
    start = (page - 1) * PAGE_ROWS
    return Paged(tuple(matching[start : start + PAGE_ROWS]), len(matching), page, pages, needle or None)


def filter_form(path: str, query: str | None, keep: dict[str, str], form_id: str) -> Html:
    """A GET form that filters the tables by name, keeping the other query fields (window, subject)."""
    hidden = (tag("input", type="hidden", name=key, value=value) for key, value in keep.items())
    return tag(
        "form",
        *hidden,
        tag("label", "Filter tools by name ", tag("input", type="search", name="q", value=query or "")),
        " ",
        tag("button", "Filter", type="submit"),
        method="get",
        action=path,
        class_="filter",
        id=form_id,
    )


def pager(shown: Paged[T], path: str, keep: dict[str, str], pager_id: str) -> Html:
    """`Tools 51-100 of 3000 (matching "crm")`, with links to the previous and next pages."""
    last = shown.first + len(shown.rows) - 1
    matching = f' matching "{shown.query}"' if shown.query else ""
    summary = f"Tools {shown.first} to {last} of {shown.matched}{matching}" if shown.rows else ""
    links: list[Child] = [summary]
    fields = {**keep, **({"q": shown.query} if shown.query else {})}
    if shown.page > 1:
        href = f"{path}?{urlencode({**fields, 'page': shown.page - 1})}"
        links += [" ", tag("a", "previous page", href=href, rel="prev", id=f"{pager_id}-prev")]
    if shown.page < shown.pages:
        href = f"{path}?{urlencode({**fields, 'page': shown.page + 1})}"
        links += [" ", tag("a", "next page", href=href, rel="next", id=f"{pager_id}-next")]
    return tag(
        "p", join(*links), class_="muted pager", id=pager_id, data_page=shown.page, data_pages=shown.pages
    )
