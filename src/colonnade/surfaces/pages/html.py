"""Safe-by-construction HTML: every value is escaped unless it is `Html` that a builder made.

Contract text is untrusted, so pages are never assembled by formatting strings: `tag` escapes
each child and attribute value with `html.escape`, and only its own output (`Html`) passes
through unescaped. Concatenating `Html` with `+` yields a plain `str`, which is escaped again.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from typing import TypeAlias

__all__ = ["VOID_ELEMENTS", "Child", "Html", "join", "separated", "tag", "text"]

VOID_ELEMENTS = frozenset({"br", "hr", "img", "input", "link", "meta"})


class Html(str):
    """Markup that is already safe to send: only `tag`, `join` and `text` create it."""

    __slots__ = ()


Child: TypeAlias = Html | str | int | float | None
"""Anything a tag may contain: markup from a builder, or a value to escape (None is left out)."""


def text(value: object) -> Html:
    """One value as HTML text, quotes included, so it is safe in content and in attributes."""
    return Html(html.escape(str(value), quote=True))


def join(*children: Child) -> Html:
    """Children side by side, each escaped unless it is already `Html`."""
    return Html("".join(_render(child) for child in children))


def separated(children: Iterable[Child], separator: str = ", ") -> Html:
    """Children with `separator` (escaped) between them, e.g. a comma-separated list of links."""
    return Html(text(separator).join(_render(child) for child in children))


def tag(name: str, /, *children: Child, **attrs: str | int | bool | None) -> Html:
    """`<name attrs>children</name>`; `class_` names the class attribute, `aria_label` aria-label.

    An attribute set to True is written bare, False or None leaves it out.
    """
    opening = name + "".join(_attribute(key, value) for key, value in attrs.items())
    if name in VOID_ELEMENTS:
        if children:
            raise ValueError(f"<{name}> cannot have children")
        return Html(f"<{opening}>")
    return Html(f"<{opening}>{join(*children)}</{name}>")


def _render(child: Child) -> str:
    if child is None:
        return ""
    if isinstance(child, Html):
        return child
    return text(child)


def _attribute(key: str, value: str | int | bool | None) -> str:
    if value is None or value is False:
        return ""
    name = key.rstrip("_").replace("_", "-")
    if value is True:
        return f" {name}"
    return f' {name}="{text(value)}"'
