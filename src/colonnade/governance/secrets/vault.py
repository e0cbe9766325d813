"""The stored secrets provider: sealed versions per tenant scope, read with a short cache.

A backend or server of tenant T gets T's secret, else the gateway's own (scope `*`); never another
tenant's. The newest version is the one sent upstream; every version still inside its rotation
overlap is accepted when the gateway verifies something presented to it (`accepts`).
"""

from __future__ import annotations

import hmac
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from colonnade.store.sealing import Sealer
from colonnade.store.secrets_repo import GATEWAY_SCOPE, SecretVersion, SecretVersionStore

__all__ = ["SecretVault", "scope_of", "seal_context"]

Clock = Callable[[], datetime]


def scope_of(tenant: str | None) -> str:
    return tenant if tenant is not None else GATEWAY_SCOPE


def seal_context(tenant: str, name: str, version: int) -> str:
    """What a sealed version is bound to: copied to another tenant, name or version, it does not open."""
    return f"colonnade-secret/{tenant}/{name}/{version}"


@dataclass(frozen=True, slots=True)
class _Opened:
    value: str
    valid_until: datetime | None


def _utc_now() -> datetime:
    return datetime.now(UTC)


class SecretVault:
    def __init__(
        self,
        store: SecretVersionStore,
        sealer: Sealer,
        *,
        cache_s: float = 5.0,
        clock: Clock = _utc_now,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.sealer = sealer
        self.cache_s = cache_s
        self.clock = clock
        self._monotonic = monotonic
        self._cache: dict[tuple[str, str], tuple[float, tuple[_Opened, ...]]] = {}

    async def resolve(self, target: str, *, tenant: str | None) -> str | None:
        """The current value for `tenant`'s backends (the tenant's, else the gateway's own)."""
        opened = await self._versions(target, tenant)
        return opened[0].value if opened else None

    async def accepted(self, name: str, *, tenant: str | None) -> tuple[str, ...]:
        """Every value that verifies now: the current one and those inside their overlap."""
        now = self.clock()
        opened = await self._versions(name, tenant)
        return tuple(v.value for v in opened if v.valid_until is None or v.valid_until > now)

    async def accepts(self, name: str, presented: str, *, tenant: str | None) -> bool:
        """Whether `presented` is a value of the secret that verifies now (compared in constant time)."""
        given = presented.encode("utf-8")
        matched = False
        for value in await self.accepted(name, tenant=tenant):
            matched |= hmac.compare_digest(value.encode("utf-8"), given)
        return matched

    def how_to_set(self, target: str, *, tenant: str | None) -> str:
        where = f" --tenant {tenant}" if tenant is not None else ""
        return f"store it with `colonnade secrets set {target}{where}` (the value is read from stdin)"

    def forget(self) -> None:
        """Drop what this replica read, so the next call reads the store (after a change)."""
        self._cache.clear()

    async def _versions(self, name: str, tenant: str | None) -> tuple[_Opened, ...]:
        key = (scope_of(tenant), name)
        cached = self._cache.get(key)
        if cached is not None and cached[0] > self._monotonic():
            return cached[1]
        opened = await self._read(name, tenant)
        if self.cache_s > 0:
            self._cache[key] = (self._monotonic() + self.cache_s, opened)
        return opened

    async def _read(self, name: str, tenant: str | None) -> tuple[_Opened, ...]:
        rows: list[SecretVersion] = []
        if tenant is not None:
            rows = await self.store.versions(tenant, name)
        if not rows:
            rows = await self.store.versions(GATEWAY_SCOPE, name)
        now = self.clock()
        return tuple(
            _Opened(self.open(row), row.valid_until)
            for row in rows
            if row.valid_until is None or row.valid_until > now
        )

    def open(self, row: SecretVersion) -> str:
        context = seal_context(row.tenant, row.name, row.version)
        return self.sealer.open(row.sealed, context=context).decode("utf-8")
