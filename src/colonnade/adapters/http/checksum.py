"""Integrity of a backend's answer: when it states a digest of its body, the body must match it.

Understood: `Content-Digest` / `Repr-Digest` (RFC 9530, `sha-256` and `sha-512`) and the older
`Content-MD5`. Only identity-encoded bodies are checked (the adapter sees bodies decoded).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Mapping

__all__ = ["digest_problem"]

_ALGORITHMS = {"sha-256": "sha256", "sha-512": "sha512"}
_MEMBER = re.compile(r"\s*([A-Za-z0-9-]+)\s*=\s*:([A-Za-z0-9+/=]*):\s*")


def digest_problem(headers: Mapping[str, str], content: bytes) -> str | None:
    """A message naming the mismatch, or None when every stated digest matches (or none is stated)."""
    if headers.get("content-encoding", "identity").strip().lower() not in ("", "identity"):
        return None
    for header in ("content-digest", "repr-digest"):
        value = headers.get(header)
        if not value:
            continue
        for member in value.split(","):
            match = _MEMBER.fullmatch(member)
            if match is None or match.group(1).lower() not in _ALGORITHMS:
                continue
            algorithm = _ALGORITHMS[match.group(1).lower()]
            if not _same(hashlib.new(algorithm, content).digest(), match.group(2)):
                return f"the body does not match its {header} ({match.group(1).lower()})"
    md5 = headers.get("content-md5")
    if md5 and not _same(hashlib.md5(content, usedforsecurity=False).digest(), md5.strip()):
        return "the body does not match its Content-MD5"
    return None


def _same(actual: bytes, stated: str) -> bool:
    try:
        return base64.b64decode(stated, validate=True) == actual
    except (binascii.Error, ValueError):
        return False
