"""The routing query: built from a conversation's recent messages, or given outright.

Retrieval sees one string. The latest user message says best what the agent needs next, so it
leads the query and is repeated (term weight); older turns add context within a word budget,
newest first, each cut short so a long tool result cannot drown the request.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

__all__ = [
    "ConversationTurn",
    "Message",
    "RoutingContext",
    "build_query",
    "message_text",
    "names",
    "words",
]

_SPOKEN_ROLES = frozenset({"user", "assistant"})
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_GENERIC_NAME_WORDS = frozenset({"mcp", "server", "api", "apis", "tool", "tools", "service"})


@dataclass(frozen=True, slots=True)
class Message:
    """One turn of a conversation; `content` is text or a list of content blocks."""

    role: str
    content: Any


ConversationTurn: TypeAlias = Message | Mapping[str, Any]
RoutingContext: TypeAlias = str | Sequence[ConversationTurn]
"""An explicit query, or the conversation it is built from."""


def build_query(
    context: RoutingContext,
    *,
    turns: int = 6,
    latest_weight: int = 2,
    max_words: int = 200,
    words_per_turn: int = 40,
) -> str:
    """The text retrieval runs on: an explicit query as given, else one line per message used."""
    if isinstance(context, str):
        return context.strip()
    spoken = [(role, text) for role, text in map(_role_and_text, context) if role in _SPOKEN_ROLES and text]
    recent = spoken[-turns:] if turns > 0 else []
    latest = next((i for i in range(len(recent) - 1, -1, -1) if recent[i][0] == "user"), None)
    parts: list[str] = []
    budget = max_words
    if latest is not None:
        head = _clip(recent[latest][1], budget)
        parts.extend([head] * max(1, latest_weight))
        budget -= len(head.split())
    for index in range(len(recent) - 1, -1, -1):
        if index == latest or budget <= 0:
            continue
        text = _clip(recent[index][1], min(words_per_turn, budget))
        parts.append(text)
        budget -= len(text.split())
    return "\n".join(parts)


def message_text(content: Any) -> str:
    """The text of a message's content: a string, or the text of its text blocks."""
    if isinstance(content, str):
        return " ".join(content.split())
    if isinstance(content, Mapping):
        return message_text(content.get("text", ""))
    if isinstance(content, Sequence):
        return " ".join(t for t in (message_text(block) for block in content) if t)
    return ""


def words(text: str) -> frozenset[str]:
    """Lower-case words of a text or an identifier (`getCustomer`, `yahoo-finance` are split)."""
    return frozenset(_singular(w.lower()) for w in _WORD.findall(text))


def names(query_words: frozenset[str], name: str) -> bool:
    """Whether a query names something (an API, a bundle): its distinctive words occur in it.

    Generic words (`mcp`, `server`, `api`...) do not count; the last segment of a qualified name
    (`acme:crm`, `org/weather`) is enough, since people name an API without its owner; and a name
    of three or more words may lose one (`Ant Design` names `Ant Design Components`).
    """
    for candidate in (name, re.split(r"[:/]", name)[-1]):
        distinctive = words(candidate) - _GENERIC_NAME_WORDS
        missing = len(distinctive - query_words)
        if distinctive and (missing == 0 or (missing == 1 and len(distinctive) >= 3)):
            return True
    return False


def _role_and_text(turn: ConversationTurn) -> tuple[str, str]:
    if isinstance(turn, Message):
        return turn.role, message_text(turn.content)
    return str(turn.get("role", "")), message_text(turn.get("content", ""))


def _clip(text: str, limit: int) -> str:
    return " ".join(text.split()[: max(0, limit)])


def _singular(word: str) -> str:
    """Plural to singular, crudely: enough for `invoices` to name `invoice`."""
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word
