"""Attestation: a call a policy marks sensitive must carry the calling agent's signature over it.

Only calls whose policy decision set `require_attestation` are checked. The attestation travels
in the call envelope's `attestation` field (REST body, or MCP `_meta["colonnade/request"]`); what
was verified (agent, key thumbprint, iat, a hash of the token) goes into the call's audit record.
"""

from __future__ import annotations

from colonnade.calls.call import Call
from colonnade.calls.call_errors import error
from colonnade.calls.decision_note import note_attestation
from colonnade.calls.envelope import CallResult
from colonnade.calls.parking import argument_hash
from colonnade.calls.pipeline import Next
from colonnade.governance.attestation import AttestationRefusal, AttestationVerifier, AttestedCall

__all__ = ["AttestationCheck"]

_NO_VERIFIER = AttestationRefusal(
    "A-AUTH-ATTESTATION-REQUIRED", "this gateway has no agent registry to verify attestations with"
)


class AttestationCheck:
    def __init__(self, verifier: AttestationVerifier | None) -> None:
        self.verifier = verifier

    async def __call__(self, call: Call, next: Next) -> CallResult:
        if not call.obligations.require_attestation:
            return await next(call)
        request = call.request
        attested = AttestedCall(call.tool.canonical_name, argument_hash(request.input), request.call_id)
        outcome = (
            await self.verifier.verify(request.attestation, call.principal, attested)
            if self.verifier is not None
            else _NO_VERIFIER
        )
        if isinstance(outcome, AttestationRefusal):
            note_attestation({"verified": False, "code": outcome.code, "reason": outcome.message})
            why = "; ".join(call.obligations.reasons)
            status, err = error(outcome.code, f"{outcome.message} (required because: {why})")
            return call.result(status, error=err)
        note_attestation(outcome.to_dict())
        return await next(call)
