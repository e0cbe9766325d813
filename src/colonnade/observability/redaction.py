"""Keep secrets and personal data out of log lines.

Two rules. A call's arguments are described by their names and a keyed hash, never by their
values. And every string on its way to a log line is scrubbed of anything that looks like a
credential or personal data: a last line of defence for library messages, exception text and
anything a caller chose as a name. Over-redacting a log line costs little; leaking a key costs a
lot, so the patterns here are broader than the contract validator's findings.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from structlog.typing import EventDict, WrappedLogger

from colonnade.contracts.secrets import luhn_valid

__all__ = [
    "REDACTED",
    "InputFingerprint",
    "argument_names",
    "canonical_json",
    "redact_event",
    "scrub",
    "scrub_values",
]

REDACTED = "[redacted]"
_MAX_NAMES = 32
_MAX_NAME_CHARS = 64
_MAX_DEPTH = 6

_SECRET_TEXT = re.compile(
    "|".join(
        (
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----(?:.|\n)*?"
            r"(?:-----END [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----|\Z)",
            r"\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*",  # a JWT (its header is base64 JSON)
            r"\bcol_[a-z0-9]{12}_[A-Za-z0-9_-]{20,}",  # a Colonnade API key
            r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
            r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})",
            r"\bxox[abposre]-[A-Za-z0-9-]{10,}",
            r"\b(?:sk|rk|pk|whsec)_(?:live|test)_[A-Za-z0-9]{6,}",
            r"\bAIza[0-9A-Za-z_-]{30,}",
            r"(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{16,}",
            r"(?i:\b(?:bearer|basic)\s+)[A-Za-z0-9._~+/=-]{8,}",
            r"(?<=://)[^\s/:@]+:[^\s/@]+(?=@)",  # the user:password part of a URL
            r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+",  # an e-mail address
        )
    )
)
# 13 to 19 digits, single spaces or dashes between them, first digit 2-6 (the card issuer ranges,
# which spares millisecond timestamps); only runs that pass the Luhn check are cards.
_CARD_LIKE = re.compile(r"(?<![\w.])[2-6](?:[ -]?\d){12,18}(?![\w.])")
_SECRET_KEY = re.compile(
    r"^(?:.*[_-])?(?:password|passwd|pwd|secret|token|api[_-]?key|apikey|authorization|cookie|"
    r"set[_-]cookie|credentials?|private[_-]?key)$",
    re.IGNORECASE,
)
# Every pattern above contains one of these, or a long run of digits: strings without any are
# left alone at the cost of a few substring searches (the full patterns cost microseconds each).
_TRIGGERS = (
    "@",
    "://",
    "-----BEGIN",
    "eyJ",
    "AKIA",
    "ASIA",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "xox",
    "_live_",
    "_test_",
    "AIza",
    "sk-",
    "earer",
    "EARER",
    "asic",
    "ASIC",
    "col_",
)
_DIGIT_RUN = re.compile(r"\d[\d -]{11,}\d")
# A UUID or a hex id (call ids, trace ids) cannot hold any of the above: the per-call fast path.
_PLAIN_ID = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|[0-9a-fA-F]{16,32}"
)
_CACHED_CHARS = 64
canonical_json = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=repr
).encode
"""A value as canonical JSON text, for keyed hashes of call arguments (the log line's input fingerprint,
the audit record's `args_hash`): one encoder, where `json.dumps` with options builds one per call."""
_UNREDACTED_KEYS = frozenset({"timestamp", "level", "logger", "duration_ms"})


def _suspicious(text: str) -> bool:
    for trigger in _TRIGGERS:
        if trigger in text:
            return True
    return _DIGIT_RUN.search(text) is not None


@lru_cache(maxsize=4096)
def _secret_key(key: str) -> bool:
    return _SECRET_KEY.match(key) is not None


def _card(match: re.Match[str]) -> str:
    digits = re.sub(r"[ -]", "", match.group())
    return REDACTED if luhn_valid(digits) else match.group()


def _scrub_text(text: str) -> str:
    if len(text) < 6 or _PLAIN_ID.fullmatch(text) is not None:
        return text
    if len(text) <= _CACHED_CHARS:
        return _scrub_short(text)
    return _scrub_any(text)


@lru_cache(maxsize=4096)
def _scrub_short(text: str) -> str:
    """Names, statuses and codes recur on every line: each distinct one is checked once."""
    return _scrub_any(text)


def _scrub_any(text: str) -> str:
    if not _suspicious(text):
        return text
    return _CARD_LIKE.sub(_card, _SECRET_TEXT.sub(REDACTED, text))


def scrub(value: Any, depth: int = 0) -> Any:
    """`value` with secret-looking strings replaced, looking into lists, tuples and mappings."""
    if isinstance(value, str):
        return _scrub_text(value)
    if depth >= _MAX_DEPTH or isinstance(value, int | float | bool) or value is None:
        return value
    if isinstance(value, Mapping):
        return {
            _scrub_text(str(k)): REDACTED if _secret_key(str(k)) else scrub(v, depth + 1)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple | set | frozenset):
        return [scrub(item, depth + 1) for item in value]
    return value


def redact_event(logger: WrappedLogger, method_name: str, event_dict: EventDict) -> EventDict:
    """structlog processor: scrub every field; a field named like a secret loses its value."""
    for key, value in event_dict.items():
        if key in _UNREDACTED_KEYS or value is None:
            continue
        if _secret_key(key):
            event_dict[key] = REDACTED
        elif type(value) is str:
            event_dict[key] = _scrub_text(value)
        elif not isinstance(value, int | float):
            event_dict[key] = scrub(value)
    return event_dict


def scrub_values(fields: dict[str, Any]) -> None:
    """Scrub every value in place; for fields whose names the code chose (none names a secret)."""
    for key, value in fields.items():
        if type(value) is str:
            fields[key] = _scrub_text(value)
        elif value is not None and not isinstance(value, int | float):
            fields[key] = scrub(value)


def argument_names(arguments: Mapping[str, Any]) -> list[str]:
    """The argument names of a call, sorted and clipped: what a log line may say about its input."""
    names = sorted(str(name)[:_MAX_NAME_CHARS] for name in arguments)
    if len(names) > _MAX_NAMES:
        return [*names[:_MAX_NAMES], f"(+{len(names) - _MAX_NAMES} more)"]
    return names


class InputFingerprint:
    """A keyed hash of a call's input: equal inputs get equal fingerprints, values stay unknown.

    The key is random per process unless one is given, so guessing a low-entropy value (an id, a
    PIN) and hashing it cannot confirm what a call carried. Pass a shared key to correlate
    fingerprints across replicas.
    """

    __slots__ = ("_key",)

    def __init__(self, key: bytes | None = None) -> None:
        self._key = key if key is not None else os.urandom(32)

    def __call__(self, value: Any) -> str:
        try:
            data = canonical_json(value)
        except (TypeError, ValueError):  # keys of mixed types or a cycle: still hash something stable
            data = repr(value)
        digest = hashlib.blake2b(data.encode("utf-8", "surrogatepass"), key=self._key, digest_size=8)
        return digest.hexdigest()
