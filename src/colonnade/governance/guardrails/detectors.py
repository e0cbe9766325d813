"""The detectors: what sensitive data or model-aimed text looks like in one string.

Each detector answers the spans of a string it recognises. A pattern alone finds too much (any
16 digits look like a card), so the kinds that carry a checksum are confirmed by it: payment cards
by Luhn, US social security numbers by their reserved ranges, Dutch BSNs by the 11-check, UK
national insurance numbers by their prefix rules. Secrets are found by their issuers' formats
(AWS, GitHub, Slack, Stripe, Google keys, private key blocks, JWTs) and, for keys of no known
format, by entropy: a long token of mixed characters that no word or identifier would give.

Presidio's analyzer was weighed and not taken: it loads a spaCy model (hundreds of MB, downloaded
at install) and spends milliseconds per text in its NLP pipeline, ten times the 0.5 ms budget of a
whole 2 KB call; the kinds this gateway must act on are format-bound and need no language model.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

__all__ = ["DETECTORS", "DETECTOR_KINDS", "Detector", "Span"]

Span = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Detector:
    """One kind of finding: a pattern that proposes spans and a check that confirms each."""

    kind: str
    pattern: re.Pattern[str]
    confirm: Callable[[str], bool] | None = None
    hint: str | None = None
    """A substring (lower case) every match contains; a text without it is not scanned."""

    def spans(self, text: str, lowered: str) -> Iterator[Span]:
        if self.hint is not None and self.hint not in lowered:
            return
        for match in self.pattern.finditer(text):
            if self.confirm is None or self.confirm(match.group()):
                yield match.span()


def _luhn(candidate: str) -> bool:
    digits = [int(c) for c in candidate if c.isdigit()]
    if not 13 <= len(digits) <= 19:
        return False
    total = 0
    for position, digit in enumerate(reversed(digits)):
        if position % 2:
            digit *= 2
            if digit > 9:
                digit -= 9
        total += digit
    return total % 10 == 0


def _us_ssn(candidate: str) -> bool:
    area, group, serial = candidate[0:3], candidate[4:6], candidate[7:11]
    return area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def _dutch_bsn(candidate: str) -> bool:
    digits = [int(c) for c in candidate]
    total = sum(d * w for d, w in zip(digits[:8], range(9, 1, -1), strict=True)) - digits[8]
    return total % 11 == 0 and total != 0


_NINO_BAD_PREFIXES = frozenset({"BG", "GB", "NK", "KN", "TN", "NT", "ZZ"})


def _uk_nino(candidate: str) -> bool:
    prefix = candidate[:2].upper()
    return prefix not in _NINO_BAD_PREFIXES and prefix[1] != "O"


def _entropy(candidate: str) -> bool:
    """High Shannon entropy and a mix of character classes: a random key, not a word or an id."""
    if candidate.isdigit() or candidate.isalpha() or not any(c.isdigit() for c in candidate):
        return False
    if not (any(c.islower() for c in candidate) and any(c.isupper() for c in candidate)):
        return False
    counts: dict[str, int] = {}
    for c in candidate:
        counts[c] = counts.get(c, 0) + 1
    size = len(candidate)
    bits = -sum(n / size * math.log2(n / size) for n in counts.values())
    return bits >= 4.0


_SECRET = re.compile(
    r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"  # AWS access key id
    r"|\bgh[pousr]_[A-Za-z0-9]{36,255}\b"  # GitHub tokens
    r"|\bgithub_pat_[A-Za-z0-9_]{22,255}\b"
    r"|\bxox[abposr]-[A-Za-z0-9-]{10,250}\b"  # Slack tokens
    r"|\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,99}\b"  # Stripe keys
    r"|\bAIza[0-9A-Za-z_-]{35}\b"  # Google API keys
    r"|-----BEGIN (?:[A-Z]+ )*PRIVATE KEY(?: BLOCK)?-----"  # PEM / PGP private keys
    r"|\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"  # JWTs
)

_INJECTION = re.compile(
    r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+|your\s+|of\s+)*"
    r"(?:previous|prior|above|earlier|preceding|system)\s+(?:instructions?|prompts?|rules|directions)"
    r"|\byou\s+are\s+now\s+(?:a|an|in|the|DAN)\b"
    r"|\b(?:reveal|print|show|repeat)\s+(?:me\s+)?(?:your|the)\s+(?:system\s+prompt|instructions)"
    r"|\bnew\s+(?:system\s+)?instructions\s*:"
    r"|\bdo\s+not\s+(?:tell|inform|show)\s+the\s+user\b"
    r"|<\|im_start\|>|<\|system\|>|\[/?INST\]|<<SYS>>|</?system>"
    r"|^\s*#{2,}\s*(?:system|instructions?)\s*:?\s*$"
    r"|\b(?:pretend|act)\s+(?:to\s+be|as\s+if\s+you\s+are|as)\s+(?:a|an|the)\s+(?:different|unrestricted|new)\b",
    re.IGNORECASE | re.MULTILINE,
)

DETECTORS: tuple[Detector, ...] = (
    Detector("payment_card", re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])"), _luhn),
    Detector("national_id", re.compile(r"(?<!\d)\d{3}-\d{2}-\d{4}(?!\d)"), _us_ssn),
    Detector("national_id", re.compile(r"(?<![\w-])\d{9}(?![\w-])"), _dutch_bsn),
    Detector(
        "national_id",
        re.compile(r"\b[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]\s?\d{2}\s?\d{2}\s?\d{2}\s?[A-D]\b"),
        _uk_nino,
    ),
    Detector("email", re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,24}\b"), hint="@"),
    Detector(
        "phone",
        re.compile(r"(?<![\w+])\+\d{1,3}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{2,4}(?:[ .-]?\d{2,4}){1,4}(?!\d)"),
        hint="+",
    ),
    Detector("secret", _SECRET),
    Detector(
        "secret", re.compile(r"(?<![A-Za-z0-9+/_=-])[A-Za-z0-9+/_=-]{32,200}(?![A-Za-z0-9+/_=-])"), _entropy
    ),
    Detector("prompt_injection", _INJECTION),
)
"""Every detector, in the order their spans are resolved when they overlap (earlier wins)."""

DETECTOR_KINDS: tuple[str, ...] = tuple(dict.fromkeys(detector.kind for detector in DETECTORS))
