"""Organs: in-process Python modules that describe themselves (capability cards) and answer stimuli.

Write one with `FunctionOrgan` and typed functions; export its cards (`colonnade cards export`);
the gateway serves the cards' functions as tools, importing the module on the first call. The
`Executive` finds, checks, sends and composes (pathways); `colonnade organ serve` runs an organ
as its own MCP server.
"""

from __future__ import annotations

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
