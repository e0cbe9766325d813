"""The errors an operator can meet with organs: cards, modules and pathways, each with its code."""

from __future__ import annotations

from collections.abc import Sequence

from colonnade.contracts.findings import Finding
from colonnade.errors import ColonnadeError

__all__ = ["OrganCardError", "OrganCardsInvalid", "OrganLoadError", "PathwayError"]


class OrganCardError(ColonnadeError):
    """A card file cannot be read, parsed or written."""

    code = "S-TOOL-CONFIG-ORGAN"


class OrganCardsInvalid(ColonnadeError):
    """A card has error findings; `findings` lists every one."""

    code = "S-TOOL-CONFIG-ORGAN"

    def __init__(self, where: str, findings: Sequence[Finding]) -> None:
        self.findings = list(findings)
        lines = [
            f"  {f.code} {f.path or '/'}: {f.message} (fix: {f.fix})" for f in self.findings if f.is_error
        ]
        super().__init__(f"{where}: the organ card is invalid:\n" + "\n".join(lines))


class OrganLoadError(ColonnadeError):
    """An organ's module cannot be imported, has no organ, or answers other operations than its card."""

    code = "S-TOOL-ORGAN-LOAD"


class PathwayError(ColonnadeError):
    """A pathway file is unreadable, or a pathway names an operation no served organ has."""

    code = "S-TOOL-CONFIG-PATHWAY"
