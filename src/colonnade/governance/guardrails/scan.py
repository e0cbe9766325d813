"""Scan a call's arguments or result: which kinds were found where, and a copy with them hidden.

A finding names the kind, the dotted path of the value it was found in (`customer.card`,
`items.0.note`, `$` for the value itself) and how many times: never the value, so that findings
can go into the policy input, the audit record and the caller's answer as they are. Integers long
enough to be a card or an id are scanned as their digits (a card number sent as a JSON number).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import Any

from colonnade.governance.guardrails.detectors import DETECTORS, Detector, Span

__all__ = ["GuardFinding", "Scanner"]

_MIN_SCANNED_DIGITS = 100_000_000
"""An integer below nine digits can be neither a card nor a national id."""


@dataclass(frozen=True, slots=True)
class GuardFinding:
    kind: str
    path: str
    count: int

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "path": self.path, "count": self.count}


class Scanner:
    """The detectors of the enabled kinds, run over every string of a JSON value."""

    def __init__(self, kinds: Collection[str]) -> None:
        self.kinds = frozenset(kinds)
        self._detectors = tuple(d for d in DETECTORS if d.kind in self.kinds)

    def scan(self, value: Any) -> tuple[GuardFinding, ...]:
        counts: dict[tuple[str, str], int] = {}
        for path, text in _texts(value, ""):
            for kind, _ in _spans(self._detectors, text):
                counts[(kind, path or "$")] = counts.get((kind, path or "$"), 0) + 1
        return tuple(GuardFinding(kind, path, count) for (kind, path), count in counts.items())

    def redacted(self, value: Any, kinds: Collection[str]) -> Any:
        """A copy of `value` with every span of `kinds` replaced by `[redacted:<kind>]`."""
        detectors = tuple(d for d in self._detectors if d.kind in kinds)
        return _redact(value, detectors) if detectors else value


def _texts(value: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _texts(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _texts(item, f"{path}.{index}" if path else str(index))
    elif isinstance(value, int) and not isinstance(value, bool) and abs(value) >= _MIN_SCANNED_DIGITS:
        yield path, str(value)


def _spans(detectors: tuple[Detector, ...], text: str) -> list[tuple[str, Span]]:
    """The spans of every detector, overlaps resolved in the detectors' order (earlier wins)."""
    lowered = text.lower()
    taken: list[tuple[str, Span]] = []
    for detector in detectors:
        for span in detector.spans(text, lowered):
            if not any(span[0] < end and start < span[1] for _, (start, end) in taken):
                taken.append((detector.kind, span))
    return taken


def _redact(value: Any, detectors: tuple[Detector, ...]) -> Any:
    if isinstance(value, dict):
        return {key: _redact(item, detectors) for key, item in value.items()}
    if isinstance(value, list):
        return [_redact(item, detectors) for item in value]
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= _MIN_SCANNED_DIGITS:
        text = str(value)
        return _redact_text(text, detectors) if _spans(detectors, text) else value
    if isinstance(value, str):
        return _redact_text(value, detectors)
    return value


def _redact_text(text: str, detectors: tuple[Detector, ...]) -> str:
    spans = sorted(_spans(detectors, text), key=lambda found: found[1][0])
    if not spans:
        return text
    parts, cursor = [], 0
    for kind, (start, end) in spans:
        parts.append(text[cursor:start])
        parts.append(f"[redacted:{kind}]")
        cursor = end
    parts.append(text[cursor:])
    return "".join(parts)
