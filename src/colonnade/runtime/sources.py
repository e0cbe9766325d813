"""Contract files named in the configuration: expand folders, load and validate each file."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from colonnade.contracts.model import Contract, ContractStatus
from colonnade.contracts.validate import load_contract

__all__ = ["CONTRACT_SUFFIXES", "expand_contract_paths", "load_for_publishing"]

CONTRACT_SUFFIXES = (".yaml", ".yml", ".json")


def expand_contract_paths(paths: Iterable[Path]) -> list[Path]:
    """Files as given; folders become their contract files, sorted for a deterministic order."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found.extend(sorted(p for p in path.iterdir() if p.suffix in CONTRACT_SUFFIXES))
        else:
            found.append(path)
    return found


def load_for_publishing(path: Path) -> Contract:
    """A validated contract marked published (raises ContractLoadError / ContractInvalid)."""
    contract = load_contract(path)
    if contract.status is ContractStatus.PUBLISHED:
        return contract
    return contract.model_copy(update={"status": ContractStatus.PUBLISHED})
