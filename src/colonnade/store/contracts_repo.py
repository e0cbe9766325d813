"""ContractStore: versions of contracts and their operations, with a publish/deprecate lifecycle.

A published version is immutable: saving different content under the same version is refused, so
what an agent called yesterday under `crm 1.2.0` is what `crm 1.2.0` still means today. New versions
are added beside the old ones, which stay as history.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from datetime import UTC, datetime

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from colonnade.contracts.model import Contract, ContractStatus, Deprecation
from colonnade.contracts.semver import parse_semver
from colonnade.store.engine import session_factory
from colonnade.store.records import StoredContract, StoredEndpoint, spec_hash, stored_document
from colonnade.store.store_errors import ContractConflict, ContractNotFound
from colonnade.store.tables import ContractRow, EndpointRow

__all__ = ["ContractStore"]

_PUBLISH_HINT = "publish one with `colonnade contract publish FILE`"
# How far along the lifecycle a status is: saving the same content only ever moves a version forward.
_LIFECYCLE = {ContractStatus.DRAFT: 0, ContractStatus.PUBLISHED: 1, ContractStatus.DEPRECATED: 2}


class ContractStore:
    """Async repository of contracts; give it an engine or a session factory."""

    def __init__(self, bind: AsyncEngine | async_sessionmaker[AsyncSession]) -> None:
        self._sessions = session_factory(bind) if isinstance(bind, AsyncEngine) else bind

    async def save(self, contract: Contract) -> StoredContract:
        """Store a version with the status it declares.

        Same content as stored: nothing changes, except that the status moves forward
        (draft -> published -> deprecated) if the contract declares a later one; re-saving never
        undoes a deprecation. Different content: a draft is replaced; a published or deprecated
        version raises ContractConflict.
        """
        _check_unique_operations(contract)
        try:
            return await self._save_once(contract)
        except IntegrityError:
            # Another writer inserted the same version between our read and our insert: decide again
            # against the row it wrote.
            return await self._save_once(contract)

    async def publish(self, tenant: str, name: str, version: str) -> StoredContract:
        """Mark a version published (also reinstates a deprecated one); older versions stay."""
        async with self._sessions.begin() as session:
            row = await self._require(session, tenant, name, version)
            if row.status != ContractStatus.PUBLISHED:
                _set_status(row, ContractStatus.PUBLISHED)
            return StoredContract.from_row(row)

    async def deprecate(
        self,
        tenant: str,
        name: str,
        version: str,
        *,
        sunset_at: datetime | None = None,
        successor: str | None = None,
    ) -> StoredContract:
        """Mark a published version deprecated; it stays readable as history, and callers pinned to it
        are warned (and refused after `sunset_at`, pointed to `successor`, a later stored version)."""
        async with self._sessions.begin() as session:
            row = await self._require(session, tenant, name, version)
            if row.status == ContractStatus.DRAFT:
                raise ContractConflict(
                    f"{tenant}/{name} {version} is a draft and was never published, so it cannot be "
                    "deprecated; publish it first, or leave the draft unused"
                )
            if successor is not None:
                await self._check_successor(session, row, successor)
            earlier = row.document.get("deprecation") or {}
            notice = Deprecation(
                deprecated_at=earlier.get("deprecated_at") or _now(),
                sunset_at=sunset_at if sunset_at is not None else earlier.get("sunset_at"),
                successor=successor if successor is not None else earlier.get("successor"),
            )
            row.document = {**row.document, "deprecation": notice.model_dump(mode="json", exclude_none=True)}
            _set_status(row, ContractStatus.DEPRECATED)
            return StoredContract.from_row(row)

    async def _check_successor(self, session: AsyncSession, row: ContractRow, successor: str) -> None:
        found = await _find(session, row.tenant, row.name, successor)
        if found is None or found.status == ContractStatus.DRAFT:
            known = [r.version for r in _newest_first(await _versions(session, row.tenant, row.name))]
            raise ContractNotFound(
                f"successor {successor} of {row.tenant}/{row.name} {row.version} is not a published "
                f"version (stored: {', '.join(known)}); publish it first"
            )
        if parse_semver(successor) <= parse_semver(row.version):
            raise ContractConflict(
                f"successor {successor} does not follow {row.version}: name a later version of "
                f"{row.tenant}/{row.name}"
            )

    async def get(self, tenant: str, name: str, version: str | None = None) -> StoredContract:
        """One version, or (version=None) the highest published version by semver precedence."""
        async with self._sessions() as session:
            if version is not None:
                return StoredContract.from_row(await self._require(session, tenant, name, version))
            rows = await _versions(session, tenant, name)
            published = [row for row in rows if row.status == ContractStatus.PUBLISHED]
            if published:
                return StoredContract.from_row(_newest_first(published)[0])
            if rows:
                states = ", ".join(f"{row.version} {row.status}" for row in _newest_first(rows))
                raise ContractNotFound(
                    f"{tenant}/{name} has no published version (stored: {states}); {_PUBLISH_HINT}"
                )
            raise ContractNotFound(f"no contract {tenant}/{name} in the store; {_PUBLISH_HINT}")

    async def history(self, tenant: str, name: str) -> builtins.list[StoredContract]:
        """Every stored version of one API, newest first (empty when the API is unknown)."""
        async with self._sessions() as session:
            rows = await _versions(session, tenant, name)
        return [StoredContract.from_row(row) for row in _newest_first(rows)]

    async def callable_contracts(self) -> builtins.list[StoredContract]:
        """Every published and deprecated version (drafts excluded): what pinned callers may reach."""
        live = (ContractStatus.PUBLISHED.value, ContractStatus.DEPRECATED.value)
        async with self._sessions() as session:
            rows = (await session.scalars(select(ContractRow).where(ContractRow.status.in_(live)))).all()
        ordered = sorted(rows, key=lambda row: (row.tenant, row.name, parse_semver(row.version)))
        return [StoredContract.from_row(row) for row in ordered]

    async def published_contracts(self) -> builtins.list[StoredContract]:
        """The highest published version of every API, ordered by tenant and name: the catalog's input."""
        async with self._sessions() as session:
            result = await session.scalars(
                select(ContractRow).where(ContractRow.status == ContractStatus.PUBLISHED.value)
            )
            latest: dict[tuple[str, str], ContractRow] = {}
            for row in _newest_first(result.all()):
                latest.setdefault((row.tenant, row.name), row)
        return [StoredContract.from_row(latest[key]) for key in sorted(latest)]

    async def endpoints(self, contract_id: int) -> builtins.list[StoredEndpoint]:
        """The operations of one stored version, in document order."""
        async with self._sessions() as session:
            result = await session.scalars(
                select(EndpointRow).where(EndpointRow.contract_id == contract_id).order_by(EndpointRow.id)
            )
            return [StoredEndpoint.from_row(row) for row in result.all()]

    async def fingerprint(self) -> frozenset[tuple[str, str, str, str, str]]:
        """(tenant, name, version, status, spec_hash) of every stored version, without the documents.

        Cheap enough to poll: a running gateway compares it to notice publishes by other processes.
        """
        query = select(
            ContractRow.tenant,
            ContractRow.name,
            ContractRow.version,
            ContractRow.status,
            ContractRow.spec_hash,
        )
        async with self._sessions() as session:
            rows = (await session.execute(query)).all()
        return frozenset((r.tenant, r.name, r.version, r.status, r.spec_hash) for r in rows)

    async def list(
        self, tenant: str | None = None, status: ContractStatus | None = None
    ) -> builtins.list[StoredContract]:
        """Stored versions, optionally of one tenant and/or one status; by tenant, name, newest first."""
        query = select(ContractRow)
        if tenant is not None:
            query = query.where(ContractRow.tenant == tenant)
        if status is not None:
            query = query.where(ContractRow.status == status.value)
        async with self._sessions() as session:
            rows = (await session.scalars(query)).all()
        ordered = sorted(_newest_first(rows), key=lambda row: (row.tenant, row.name))
        return [StoredContract.from_row(row) for row in ordered]

    async def _save_once(self, contract: Contract) -> StoredContract:
        digest = spec_hash(contract)
        async with self._sessions.begin() as session:
            row = await _find(session, contract.tenant, contract.name, contract.version, for_update=True)
            if row is None:
                row = _new_row(contract, digest)
                session.add(row)
                await session.flush()
                session.add_all(_endpoint_rows(row.id, contract))
            elif row.spec_hash == digest:
                if _LIFECYCLE[contract.status] > _LIFECYCLE[ContractStatus(row.status)]:
                    _set_status(row, contract.status)
            elif row.status == ContractStatus.DRAFT:
                _replace_draft(row, contract, digest)
                await session.execute(delete(EndpointRow).where(EndpointRow.contract_id == row.id))
                session.add_all(_endpoint_rows(row.id, contract))
            else:
                raise _immutable(row, digest)
            return StoredContract.from_row(row)

    async def _require(self, session: AsyncSession, tenant: str, name: str, version: str) -> ContractRow:
        row = await _find(session, tenant, name, version, for_update=True)
        if row is not None:
            return row
        known = [r.version for r in _newest_first(await _versions(session, tenant, name))]
        if known:
            raise ContractNotFound(
                f"{tenant}/{name} has no version {version}; stored versions: {', '.join(known)}"
            )
        raise ContractNotFound(f"no contract {tenant}/{name} in the store; {_PUBLISH_HINT}")


async def _find(
    session: AsyncSession, tenant: str, name: str, version: str, *, for_update: bool = False
) -> ContractRow | None:
    query = select(ContractRow).where(
        ContractRow.tenant == tenant, ContractRow.name == name, ContractRow.version == version
    )
    if for_update:
        query = query.with_for_update()
    return (await session.scalars(query)).one_or_none()


async def _versions(session: AsyncSession, tenant: str, name: str) -> Sequence[ContractRow]:
    query = select(ContractRow).where(ContractRow.tenant == tenant, ContractRow.name == name)
    return (await session.scalars(query)).all()


def _newest_first(rows: Sequence[ContractRow]) -> builtins.list[ContractRow]:
    return sorted(rows, key=lambda row: parse_semver(row.version), reverse=True)


def _now() -> datetime:
    return datetime.now(UTC)


def _new_row(contract: Contract, digest: str) -> ContractRow:
    now = _now()
    return ContractRow(
        tenant=contract.tenant,
        name=contract.name,
        version=contract.version,
        status=contract.status.value,
        spec_hash=digest,
        document=stored_document(contract),
        created_at=now,
        updated_at=now,
    )


def _replace_draft(row: ContractRow, contract: Contract, digest: str) -> None:
    row.document = stored_document(contract)
    row.spec_hash = digest
    row.status = contract.status.value
    row.updated_at = _now()


def _set_status(row: ContractRow, status: ContractStatus) -> None:
    row.status = status.value
    row.updated_at = _now()


def _endpoint_rows(contract_id: int, contract: Contract) -> builtins.list[EndpointRow]:
    return [
        EndpointRow(
            contract_id=contract_id,
            path=op.endpoint.path,
            method=op.method,
            operation_id=op.endpoint.operation_id,
            tool_name=op.tool_name,
            canonical_name=op.canonical_name,
            side_effects=op.endpoint.llm.side_effects.value if op.endpoint.llm is not None else None,
            mcp=op.endpoint.mcp,
        )
        for op in contract.operations()
    ]


def _check_unique_operations(contract: Contract) -> None:
    seen: set[tuple[str, str]] = set()
    for op in contract.operations():
        key = (op.endpoint.path, op.method)
        if key in seen:
            raise ContractConflict(
                f"{contract.tenant}/{contract.name} {contract.version} declares {op.method} "
                f"{op.endpoint.path} more than once; each path + method may appear once (validator "
                "code UAC013): merge or remove the duplicate endpoint"
            )
        seen.add(key)


def _immutable(row: ContractRow, digest: str) -> ContractConflict:
    return ContractConflict(
        f"{row.tenant}/{row.name} {row.version} is {row.status} and published versions are immutable, "
        f"but this document differs from the stored one (sha256 {digest[:12]} vs {row.spec_hash[:12]}); "
        f"bump the version (e.g. to {parse_semver(row.version).next_patch()}) and publish that"
    )
