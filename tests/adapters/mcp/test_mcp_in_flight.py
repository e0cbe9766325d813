"""Which caller a handshake-era server's own question goes to, and what the server hears when none can."""

from __future__ import annotations

import mcp_types as types

from colonnade.adapters.mcp.in_flight import InFlight
from colonnade.mcp_relay.relay import Relay


class _Askable(Relay):
    @property
    def can_ask(self) -> bool:
        return True

    async def ask(self, request: types.InputRequest) -> types.InputResponse | types.ErrorData:
        return types.ListRootsResult(roots=[])


async def _refusal(in_flight: InFlight) -> str:
    answer = await in_flight._ask(types.ListRootsRequest())
    assert isinstance(answer, types.ErrorData)
    return answer.message


async def test_the_refusal_says_why_no_caller_could_answer() -> None:
    in_flight = InFlight()
    assert await _refusal(in_flight) == "no caller can answer roots/list: no call is in flight"
    with in_flight.call(Relay()):
        assert await _refusal(in_flight) == (
            "no caller can answer roots/list: the caller of the call in flight cannot be asked"
            " (it declared none of elicitation, sampling or roots, or has no stream to be asked on)"
        )
        with in_flight.call(Relay()):
            assert "none of the 2 calls in flight has a caller that can be asked" in await _refusal(in_flight)
        with in_flight.call(_Askable()):
            assert isinstance(await in_flight._ask(types.ListRootsRequest()), types.ListRootsResult)
            with in_flight.call(_Askable()):
                assert await _refusal(in_flight) == (
                    "no caller can answer roots/list: 2 calls in flight could, and nothing says whose it is"
                )
