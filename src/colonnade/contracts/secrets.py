"""Detect secrets and real personal data in strings (rule UAC012: examples must be synthetic).

Examples travel to agents, model providers and logs, so anything that looks like a credential
or a real person's data is refused. The detectors are deliberately strict:

- provider keys and tokens: AWS (AKIA/ASIA), GitHub (ghp_/gho_/ghu_/ghs_/ghr_, github_pat_),
  Slack (xox?-), Stripe (sk_/rk_ live *and* test keys: a test key is still someone's credential),
  Google (AIza), OpenAI-style (sk-...), and `Bearer <long token>`;
- PEM private keys, JWTs (three base64url segments whose header decodes to JSON with `alg`);
- passwords in URLs (`scheme://user:pass@host`); a placeholder password (`${VAR}`, `{{var}}`,
  `<password>`, `***`, `xxx`) is not a password and is not flagged;
- payment card numbers: 13-19 digits (single spaces or dashes between groups), first digit 2-6
  (the payment-card issuer ranges; this spares millisecond timestamps), passing the Luhn check.
  Well-known *test* cards such as 4111 1111 1111 1111 are flagged too: an example has no reason
  to carry anything card-like, and a detector that guessed which numbers are "test" ones would
  let real ones through;
- e-mail addresses outside the reserved example domains (example.com/.net/.org and their
  subdomains, *.example, *.test, *.invalid, localhost and *.localhost).

A match is reported redacted (see `SecretMatch.redacted`) so the finding itself leaks nothing.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

__all__ = ["SecretMatch", "example_domain", "find_secrets", "luhn_valid"]


@dataclass(frozen=True, slots=True)
class SecretMatch:
    """One suspicious span of a string: what it looks like (`kind`) and where it is."""

    kind: str
    text: str
    start: int
    end: int

    @property
    def redacted(self) -> str:
        """Enough to locate the match, never enough to use it."""
        if len(self.text) <= 8:
            return self.text[:2] + "…"
        return self.text[:4] + "…" + f" ({len(self.text)} chars)"


Candidate = tuple[int, int]
Detector = Callable[[str], Iterator[Candidate]]


def _regex(pattern: str, flags: int = 0) -> Detector:
    compiled = re.compile(pattern, flags)

    def detect(text: str) -> Iterator[Candidate]:
        for match in compiled.finditer(text):
            yield match.span()

    return detect


def _mixed(token: str) -> bool:
    """A real token mixes letters and digits; prose like `sk-my-example-value` does not."""
    return any(c.isdigit() for c in token) and any(c.isalpha() for c in token)


_OPENAI = re.compile(r"(?<![A-Za-z0-9_-])sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}")
_BEARER = re.compile(r"\bBearer\s+([A-Za-z0-9._~+/=-]{20,})", re.IGNORECASE)


def _openai(text: str) -> Iterator[Candidate]:
    for match in _OPENAI.finditer(text):
        if _mixed(match.group()[3:]):
            yield match.span()


def _bearer(text: str) -> Iterator[Candidate]:
    for match in _BEARER.finditer(text):
        if _mixed(match.group(1)):
            yield match.span()


_JWT = re.compile(r"(?<![A-Za-z0-9_-])([A-Za-z0-9_-]{8,})\.([A-Za-z0-9_-]{2,})\.([A-Za-z0-9_-]*)")


def _b64url_json(segment: str) -> object:
    padded = segment + "=" * (-len(segment) % 4)
    try:
        return json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
    except (binascii.Error, ValueError):
        return None


def _jwt(text: str) -> Iterator[Candidate]:
    for match in _JWT.finditer(text):
        header = _b64url_json(match.group(1))
        if isinstance(header, dict) and "alg" in header:
            yield match.span()


_URL_PASSWORD = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://([^\s/:@]+):([^\s/@]+)@[^\s/?#]+")
_PLACEHOLDER = re.compile(r"^(?:\$\{[^}]*\}|\$[A-Z_][A-Z0-9_]*|\{\{[^}]*\}\}|<[^>]*>|\*+|x+|X+)$")


def _url_password(text: str) -> Iterator[Candidate]:
    for match in _URL_PASSWORD.finditer(text):
        if not _PLACEHOLDER.match(match.group(2)):
            yield match.span()


_DIGIT_RUN = re.compile(r"(?<![\w.])\d+(?:[ -]\d+)*(?!\w|\.\d)")


def luhn_valid(digits: str) -> bool:
    """The Luhn checksum every payment card number satisfies."""
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2 == 1:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def _card_like(run: str) -> bool:
    groups = re.split(r"[ -]", run)
    if len(groups) > 1 and not all(3 <= len(group) <= 6 for group in groups):
        return False
    digits = "".join(groups)
    return 13 <= len(digits) <= 19 and digits[0] in "23456" and luhn_valid(digits)


def _card(text: str) -> Iterator[Candidate]:
    for match in _DIGIT_RUN.finditer(text):
        if _card_like(match.group()):
            yield match.span()


_EMAIL = re.compile(
    r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+@"
    r"([A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*)"
)
_EXAMPLE_DOMAINS = ("example.com", "example.net", "example.org", "localhost")
_EXAMPLE_TLDS = ("example", "test", "invalid", "localhost")


def example_domain(domain: str) -> bool:
    """Reserved for documentation and testing (RFC 2606 / RFC 6761): safe in examples."""
    name = domain.lower().rstrip(".")
    if any(name == d or name.endswith("." + d) for d in _EXAMPLE_DOMAINS):
        return True
    return name.rsplit(".", 1)[-1] in _EXAMPLE_TLDS


def _email(text: str) -> Iterator[Candidate]:
    for match in _EMAIL.finditer(text):
        if not example_domain(match.group(1)):
            yield match.span()


# Most specific first: a span claimed by an earlier detector is not reported again by a later one
# (a JWT after "Bearer" is a JWT; the "pass@host" of a URL password is not an e-mail address).
_DETECTORS: tuple[tuple[str, Detector], ...] = (
    ("a PEM private key", _regex(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")),
    ("a JSON Web Token", _jwt),
    ("an AWS access key ID", _regex(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("a GitHub token", _regex(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})")),
    ("a Slack token", _regex(r"\bxox[abposre]-[A-Za-z0-9-]{10,}")),
    ("a Stripe secret key", _regex(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}")),
    ("a Google API key", _regex(r"\bAIza[0-9A-Za-z_-]{35}")),
    ("an OpenAI-style secret key", _openai),
    ("a bearer token", _bearer),
    ("a password in a URL", _url_password),
    ("a payment card number (passes the Luhn check)", _card),
    ("an e-mail address outside the example domains", _email),
)


def find_secrets(text: str) -> list[SecretMatch]:
    """Every suspicious span of `text`, in order of appearance, without overlaps."""
    found: list[SecretMatch] = []
    for kind, detect in _DETECTORS:
        for start, end in detect(text):
            if not any(start < other.end and other.start < end for other in found):
                found.append(SecretMatch(kind, text[start:end], start, end))
    return sorted(found, key=lambda match: match.start)
