"""The organ interface: anything that can describe itself and answer a stimulus is an organ.

Organs are duck-typed: a hand-written class, a `FunctionOrgan` built with decorators, or a proxy
to a sidecar process all satisfy this protocol, and the gateway, the executive and the sidecar
server use nothing else.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from colonnade.organs.card import OrganCard
from colonnade.organs.stimulus import Response, Stimulus

__all__ = ["Organ"]


@runtime_checkable
class Organ(Protocol):
    def describe(self) -> OrganCard:
        """The organ's capability card."""
        ...

    async def stimulate(self, stimulus: Stimulus) -> Response:
        """Answer one stimulus; never raises for a failure of the operation (`ok=false` instead)."""
        ...
