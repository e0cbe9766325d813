"""Organs: in-process Python modules that describe themselves (capability cards) and answer stimuli.

Write one with `FunctionOrgan` and typed functions; export its cards (`colonnade cards export`);
the gateway serves the cards' functions as tools, importing the module on the first call. The
`Executive` finds, checks, sends and composes (pathways); `colonnade organ serve` runs an organ
as its own MCP server.

Names load on first use: an organ module that imports `FunctionOrgan` does not load the
executive's router and index.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

_PUBLIC = {
    "Executive": "colonnade.organs.executive",
    "FunctionCard": "colonnade.organs.card",
    "FunctionExample": "colonnade.organs.card",
    "FunctionMatch": "colonnade.organs.executive",
    "FunctionOrgan": "colonnade.organs.functional",
    "FunctionRef": "colonnade.organs.executive",
    "FunctionSlo": "colonnade.organs.card",
    "Organ": "colonnade.organs.protocol",
    "OrganCard": "colonnade.organs.card",
    "OrganError": "colonnade.organs.stimulus",
    "OrganFailure": "colonnade.organs.stimulus",
    "OrganHost": "colonnade.organs.loading",
    "Pathway": "colonnade.organs.pathways",
    "PathwayResult": "colonnade.organs.executive",
    "PathwayStep": "colonnade.organs.pathways",
    "Residency": "colonnade.organs.card",
    "Response": "colonnade.organs.stimulus",
    "Stimulus": "colonnade.organs.stimulus",
    "StimulusContext": "colonnade.organs.stimulus",
    "SubOrganCard": "colonnade.organs.card",
}

__all__ = [
    "Executive",
    "FunctionCard",
    "FunctionExample",
    "FunctionMatch",
    "FunctionOrgan",
    "FunctionRef",
    "FunctionSlo",
    "Organ",
    "OrganCard",
    "OrganError",
    "OrganFailure",
    "OrganHost",
    "Pathway",
    "PathwayResult",
    "PathwayStep",
    "Residency",
    "Response",
    "Stimulus",
    "StimulusContext",
    "SubOrganCard",
]

if TYPE_CHECKING:
    from colonnade.organs.card import (
        FunctionCard,
        FunctionExample,
        FunctionSlo,
        OrganCard,
        Residency,
        SubOrganCard,
    )
    from colonnade.organs.executive import Executive, FunctionMatch, FunctionRef, PathwayResult
    from colonnade.organs.functional import FunctionOrgan
    from colonnade.organs.loading import OrganHost
    from colonnade.organs.pathways import Pathway, PathwayStep
    from colonnade.organs.protocol import Organ
    from colonnade.organs.stimulus import OrganError, OrganFailure, Response, Stimulus, StimulusContext


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'colonnade.organs' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value
