"""An MCP client carries an attestation (docs/policy.md) in `_meta["colonnade/request"]`, beside the
call id it signs; a malformed one is refused as an envelope error before any stage runs."""

from __future__ import annotations

from colonnade.calls.envelope import CallRequest
from colonnade.surfaces.mcp.call_envelope import call_request


def test_the_attestation_travels_with_the_call_id_it_signs() -> None:
    meta = {"colonnade/request": {"call_id": "call-7", "attestation": "aGVhZA.Ym9keQ.c2ln"}}
    request = call_request("acme__items__write_item", {"item_id": "I-1"}, meta)
    assert isinstance(request, CallRequest)
    assert (request.call_id, request.attestation) == ("call-7", "aGVhZA.Ym9keQ.c2ln")
    assert call_request("acme__items__write_item", {}, {}).attestation is None  # type: ignore[union-attr]


def test_an_attestation_that_is_not_a_string_is_an_envelope_error() -> None:
    refused = call_request("t", {}, {"colonnade/request": {"attestation": {"jws": "x"}}})
    assert not isinstance(refused, CallRequest)
    assert "attestation" in str(refused)
