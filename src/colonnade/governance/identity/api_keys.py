"""API keys: `col_<id>_<secret>`, random, stored only as the SHA-256 of the secret.

The id is public (it names the key in listings and audit records); the secret is 256 random bits,
so a plain SHA-256 is enough to keep a stolen table useless (no password-style stretching is
needed for secrets nobody chose). A presented key is looked up by id and compared in constant
time. Checked keys are remembered for `cache_s` seconds (`auth.api_key_cache_s`), so a busy client
does not cost a database read per request; a revocation made through this gateway applies at once
(the key is forgotten, and a read already in flight is not remembered), one made by another replica
(or the CLI) as soon as its change reaches this one over the fan-out (`key.changed`, well within a
second), and without Redis within `cache_s` of the read that was remembered.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from colonnade.governance.identity.failures import AuthFailure, invalid
from colonnade.governance.personas import effective_scopes, persona_of
from colonnade.governance.principal import Principal, PrincipalKind
from colonnade.store.api_keys_repo import ApiKeyRecord, ApiKeyStore

__all__ = [
    "KEY_PREFIX",
    "ApiKeys",
    "NewKey",
    "hash_secret",
    "is_api_key",
    "malformed_key_reason",
    "new_key",
    "parse_key",
]

logger = logging.getLogger(__name__)
KEY_PREFIX = "col_"
_FORMAT = re.compile(r"^col_([a-z0-9]{12})_([A-Za-z0-9_-]{43})$")
_TOUCH_EVERY_S = 60.0


@dataclass(frozen=True, slots=True)
class NewKey:
    """A key just made: the full key (shown once) and its public id."""

    key_id: str
    secret: str
    secret_hash: str

    @property
    def token(self) -> str:
        return f"{KEY_PREFIX}{self.key_id}_{self.secret}"


def new_key() -> NewKey:
    key_id = secrets.token_hex(6)
    secret = secrets.token_urlsafe(32)
    return NewKey(key_id, secret, hash_secret(secret))


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode("ascii")).hexdigest()


def is_api_key(credential: str) -> bool:
    return credential.startswith(KEY_PREFIX)


def parse_key(credential: str) -> tuple[str, str] | None:
    """(id, secret) of a well-formed key; None otherwise."""
    match = _FORMAT.match(credential)
    return (match.group(1), match.group(2)) if match else None


_ID = re.compile(r"[a-z0-9]{12}")
_SECRET_CHARS = re.compile(r"[A-Za-z0-9_-]*")


def malformed_key_reason(credential: str) -> str:
    """Which part of a `col_...` credential breaks the `col_<id>_<secret>` rule, by counts only
    (the id is 12 characters of a-z0-9, the secret 43 of A-Za-z0-9_-): nothing of it is echoed."""
    rule = "an API key is col_<id>_<secret>: a 12-character id (a-z, 0-9), '_', a 43-character secret"
    rest = credential[len(KEY_PREFIX) :]
    key_id, separator, secret = rest[:12], rest[12:13], rest[13:]
    if not _ID.fullmatch(key_id):
        given = len(rest.split("_", 1)[0])
        problem = f"the id is not 12 characters of a-z and 0-9 ({given} before the next '_')"
    elif separator != "_":
        problem = "the id is not followed by '_'"
    elif len(secret) != 43 or not _SECRET_CHARS.fullmatch(secret):
        outside = sum(1 for char in secret if not _SECRET_CHARS.fullmatch(char))
        problem = f"the secret has {len(secret)} characters" + (
            f", {outside} of them outside A-Za-z0-9_-" if outside else ""
        )
    else:
        problem = "it does not match"
    return f"{rule} (A-Za-z0-9_-); in the key sent {problem}: copy the whole key `keys create` printed"


class ApiKeys:
    """Authenticates API keys against the store."""

    def __init__(
        self, store: ApiKeyStore, *, cache_s: float = 5.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.store = store
        self.cache_s = cache_s
        self._clock = clock
        self._cache: dict[str, tuple[ApiKeyRecord | None, float]] = {}
        self._forgotten = 0
        """Counts `forget` calls: a read that began before one is not remembered (it may be stale)."""
        self._touched: dict[str, float] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    async def authenticate(self, credential: str) -> Principal | AuthFailure:
        parsed = parse_key(credential)
        if parsed is None:
            return invalid("A-AUTH-MALFORMED", malformed_key_reason(credential))
        key_id, secret = parsed
        record = await self._record(key_id)
        if record is None or not hmac.compare_digest(record.secret_hash, hash_secret(secret)):
            return invalid("A-AUTH-API-KEY", "the API key is not known to this gateway")
        now = datetime.now(UTC)
        if record.revoked_at is not None:
            return invalid("A-AUTH-REVOKED", f"the API key {key_id} has been revoked", key_id=key_id)
        if record.expires_at is not None and record.expires_at <= now:
            return invalid("A-AUTH-EXPIRED", f"the API key {key_id} has expired", key_id=key_id)
        self._touch(key_id, now)
        persona = persona_of(record.persona)
        return Principal(
            PrincipalKind.USER,
            record.owner,
            tenant=record.tenant,
            persona=record.persona,
            scopes=effective_scopes(persona, record.scopes),
            team=record.team,
            credential=f"api_key:{key_id}",
        )

    def forget(self, key_id: str) -> None:
        """Drop a remembered key (after this gateway revoked or rotated it)."""
        self._forgotten += 1
        self._cache.pop(key_id, None)

    def forget_all(self) -> None:
        """Drop every remembered key (changes may have been missed: the fan-out had a gap)."""
        self._forgotten += 1
        self._cache.clear()

    async def aclose(self) -> None:
        for task in list(self._tasks):
            await task

    async def _record(self, key_id: str) -> ApiKeyRecord | None:
        cached = self._cache.get(key_id)
        now = self._clock()
        if cached is not None and now - cached[1] < self.cache_s:
            return cached[0]
        forgotten = self._forgotten
        record = await self.store.get(key_id)
        if forgotten != self._forgotten:
            return record  # a key was revoked meanwhile: this read may predate it, so it is not kept
        if len(self._cache) > 10_000:
            self._cache.clear()
        self._cache[key_id] = (record, now)
        return record

    def _touch(self, key_id: str, when: datetime) -> None:
        """Record the last use, at most once a minute per key, off the request's path."""
        now = self._clock()
        if now - self._touched.get(key_id, -_TOUCH_EVERY_S) < _TOUCH_EVERY_S:
            return
        self._touched[key_id] = now
        task = asyncio.get_running_loop().create_task(self._store_touch(key_id, when))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _store_touch(self, key_id: str, when: datetime) -> None:
        try:
            await self.store.touch(key_id, when)
        except Exception as exc:  # last use is bookkeeping; it must never fail a request
            logger.warning("could not record the last use of API key %s: %s", key_id, type(exc).__name__)
