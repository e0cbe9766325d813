"""What the store hands out: plain frozen records, detached from any database session.

A stored document is the contract without its `status`: status is lifecycle state kept in its own
column, so publishing or deprecating a version never changes its content or its `spec_hash`. The
deprecation notice (sunset, successor) is lifecycle state too: kept in the document, outside the hash.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from colonnade.contracts.model import Contract, ContractStatus, SideEffects
from colonnade.store.tables import ContractRow, EndpointRow

__all__ = [
    "StoredContract",
    "StoredEndpoint",
    "canonical_json",
    "contract_document",
    "spec_hash",
    "stored_document",
]


_LIFECYCLE_FIELDS = {"status", "deprecation"}


def contract_document(contract: Contract) -> dict[str, Any]:
    """A version's content: every explicit field except the lifecycle state (`status`, `deprecation`)."""
    return contract.model_dump(mode="json", exclude_none=True, exclude=_LIFECYCLE_FIELDS)


def stored_document(contract: Contract) -> dict[str, Any]:
    """The JSON document the store keeps: the content, plus the deprecation notice when there is one."""
    document = contract_document(contract)
    if contract.deprecation is not None:
        document["deprecation"] = contract.deprecation.model_dump(mode="json", exclude_none=True)
    return document


def canonical_json(document: Any) -> bytes:
    """Key-sorted, whitespace-free UTF-8 JSON: equal documents give equal bytes."""
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def spec_hash(contract: Contract) -> str:
    """sha256 (hex) of the canonical JSON of the stored document; identifies a version's content."""
    return hashlib.sha256(canonical_json(contract_document(contract))).hexdigest()


@dataclass(frozen=True, slots=True)
class StoredContract:
    """One stored version of an API."""

    id: int
    tenant: str
    name: str
    version: str
    status: ContractStatus
    spec_hash: str
    document: dict[str, Any]
    created_at: datetime
    updated_at: datetime

    @property
    def label(self) -> str:
        """`tenant/name version`, as messages and the CLI show it."""
        return f"{self.tenant}/{self.name} {self.version}"

    def contract(self) -> Contract:
        """The contract model, with the status the store holds now."""
        return Contract.model_validate({**self.document, "status": self.status.value})

    @classmethod
    def from_row(cls, row: ContractRow) -> StoredContract:
        return cls(
            id=row.id,
            tenant=row.tenant,
            name=row.name,
            version=row.version,
            status=ContractStatus(row.status),
            spec_hash=row.spec_hash,
            document=row.document,
            created_at=_utc(row.created_at),
            updated_at=_utc(row.updated_at),
        )


@dataclass(frozen=True, slots=True)
class StoredEndpoint:
    """One operation of a stored contract, with the names the catalog uses."""

    id: int
    contract_id: int
    path: str
    method: str
    operation_id: str
    tool_name: str
    canonical_name: str
    side_effects: SideEffects | None
    mcp: bool

    @classmethod
    def from_row(cls, row: EndpointRow) -> StoredEndpoint:
        return cls(
            id=row.id,
            contract_id=row.contract_id,
            path=row.path,
            method=row.method,
            operation_id=row.operation_id,
            tool_name=row.tool_name,
            canonical_name=row.canonical_name,
            side_effects=SideEffects(row.side_effects) if row.side_effects is not None else None,
            mcp=row.mcp,
        )


def _utc(value: datetime) -> datetime:
    """SQLite returns naive datetimes; the store only ever writes UTC, so label them as such."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
