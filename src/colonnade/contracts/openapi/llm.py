"""The `llm` block of an imported operation: taken from `x-llm`, or seeded as a draft to review.

A seeded block is a starting point, not a judgement: its summary and intent are cut from
the operation's prose and its side effects follow the HTTP method, so the import report lists
every seeded operation for a human to check before the contract is published.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from colonnade.contracts.model import LlmBlock, SideEffects
from colonnade.contracts.openapi.naming import truncate

__all__ = ["LLM_FIELDS", "TOOL_NAME", "merge_llm", "seed_llm", "seed_reason", "side_effects_for"]

SUMMARY_LIMIT = 160
INTENT_LIMIT = 360
TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
LLM_FIELDS = tuple(name for name, field in LlmBlock.model_fields.items() if field.is_required())
"""The fields every llm block has (a draft seeds them); the optional ones are kept when given."""
_OPTIONAL_FIELDS = tuple(name for name in LlmBlock.model_fields if name not in LLM_FIELDS)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
_HTML_TAG = re.compile(r"<[^<>]+>")
_SPACE_BEFORE_PUNCTUATION = re.compile(r"\s+([.,;:!?])")
_SIDE_EFFECTS = {
    "GET": SideEffects.READ,
    "HEAD": SideEffects.READ,
    "OPTIONS": SideEffects.READ,
    "POST": SideEffects.WRITE,
    "PUT": SideEffects.WRITE,
    "PATCH": SideEffects.WRITE,
    "DELETE": SideEffects.DESTRUCTIVE,
}


def side_effects_for(method: str) -> SideEffects:
    """What a method conventionally does: reads read, writes write, DELETE destroys."""
    return _SIDE_EFFECTS[method.upper()]


def _without_html(text: str) -> str:
    """Descriptions are often HTML (Stripe's are): keep the words, drop the tags."""
    return _SPACE_BEFORE_PUNCTUATION.sub(r"\1", " ".join(_HTML_TAG.sub(" ", text).split()))


def _first_sentence(text: str) -> str:
    flat = " ".join(text.split())
    return _SENTENCE_END.split(flat, maxsplit=1)[0]


def _lower_first(text: str) -> str:
    if len(text) > 1 and text[1].isupper():
        return text
    return text[:1].lower() + text[1:]


def _adds_to(description: str, summary: str) -> bool:
    """Does the description say more than the summary (beyond case and a final period)?"""

    def bare(text: str) -> str:
        return " ".join(text.split()).rstrip(".").casefold()

    return bare(description) != bare(summary)


def seed_llm(*, method: str, path: str, summary: str, description: str, tool_name: str) -> dict[str, Any]:
    """A draft block from the operation's `summary` and `description` (either may be empty)."""
    summary, description = _without_html(summary), _without_html(description)
    side_effects = side_effects_for(method)
    destructive = side_effects is SideEffects.DESTRUCTIVE
    if summary.strip():
        short = truncate(summary, SUMMARY_LIMIT)
    elif description.strip():
        short = truncate(_first_sentence(description), SUMMARY_LIMIT)
    else:
        short = f"{method.upper()} {path}"
    if description.strip() and _adds_to(description, short):
        intent = truncate(description, INTENT_LIMIT)
    elif summary.strip() or description.strip():
        intent = truncate(f"Use to {_lower_first(short.rstrip('.'))}.", INTENT_LIMIT)
    else:
        intent = f"Use to call {short}."
    return {
        "summary": short,
        "intent": intent,
        "tool_name": tool_name,
        "side_effects": side_effects.value,
        "safe_for_agents": not destructive,
        "requires_human_approval": destructive,
        "examples": [],
    }


def seed_reason(method: str, summary: str, description: str) -> str:
    """Why a seeded block needs review: where its prose came from and what was guessed."""
    sources = [label for label, text in (("summary", summary), ("description", description)) if text.strip()]
    origin = " and ".join(sources) if sources else "the method and path only"
    guessed = side_effects_for(method).value
    return f"no x-llm: drafted from {origin}; side_effects {guessed!r} guessed from {method.upper()}"


def merge_llm(given: object, seed: Mapping[str, Any]) -> tuple[dict[str, Any], str | None]:
    """The `x-llm` block with any missing or invalid field taken from `seed`, and why it needs review.

    The reason is `None` when `x-llm` was complete and valid, so the block is used as written.
    """
    if not isinstance(given, Mapping):
        return dict(seed), f"x-llm is a {type(given).__name__}, not a mapping: llm block drafted instead"
    missing = [f for f in LLM_FIELDS if f not in given]
    unknown = sorted(str(k) for k in given if k not in LlmBlock.model_fields)
    block = {f: given[f] if f in given else seed[f] for f in LLM_FIELDS}
    block.update({f: given[f] for f in _OPTIONAL_FIELDS if f in given})
    invalid: list[str] = []
    if isinstance(block["tool_name"], str) and not TOOL_NAME.match(block["tool_name"]):
        invalid.append("tool_name")
        block["tool_name"] = seed["tool_name"]
    try:
        validated = LlmBlock.model_validate(block)
    except ValidationError as exc:
        bad = sorted({str(error["loc"][0]) for error in exc.errors() if error["loc"]})
        for name in bad:
            if name in seed:
                block[name] = seed[name]
            else:
                block.pop(name, None)
        invalid.extend(bad)
        validated = LlmBlock.model_validate(block)
    problems = []
    if missing:
        problems.append(f"x-llm lacks {', '.join(missing)} (drafted)")
    if invalid:
        problems.append(f"x-llm has an invalid {', '.join(sorted(set(invalid)))} (drafted)")
    if unknown:
        problems.append(f"x-llm has unknown keys {', '.join(unknown)} (dropped)")
    return validated.model_dump(mode="json", exclude_defaults=True, include=set(block)), "; ".join(
        problems
    ) or None
