"""The compatibility gate of every publish path: a new version against the one it follows.

`colonnade contract publish` and the gateway's configured contracts both pass through it, so a
version that breaks callers without a major bump cannot go live by either road.
"""

from __future__ import annotations

from colonnade.contracts.compatibility import (
    ContractDiff,
    baseline_for,
    compatibility_findings,
    diff_contracts,
)
from colonnade.contracts.model import Contract, ContractStatus
from colonnade.contracts.validate import ContractInvalid
from colonnade.store.contracts_repo import ContractStore
from colonnade.store.store_errors import ContractNotFound

__all__ = ["already_published", "check_compatible", "compatibility_diff"]


async def already_published(store: ContractStore, contract: Contract) -> bool:
    """Whether this exact version is stored past draft: it was checked when it was published."""
    try:
        stored = await store.get(contract.tenant, contract.name, contract.version)
    except ContractNotFound:
        return False
    return stored.status is not ContractStatus.DRAFT


async def compatibility_diff(store: ContractStore, contract: Contract) -> ContractDiff | None:
    """The diff against the published version this one follows (None for a first version)."""
    history = await store.history(contract.tenant, contract.name)
    earlier = [item.contract() for item in history if item.version != contract.version]
    baseline = baseline_for(contract, earlier)
    return diff_contracts(baseline, contract) if baseline is not None else None


async def check_compatible(store: ContractStore, contract: Contract, path: str) -> ContractDiff | None:
    """Raise ContractInvalid (finding CMP001) when `contract` breaks callers without a major bump."""
    if await already_published(store, contract):
        return None
    diff = await compatibility_diff(store, contract)
    if diff is None:
        return None
    findings = compatibility_findings(diff)
    if any(finding.is_error for finding in findings):
        raise ContractInvalid(findings, path)
    return diff
