"""Attestations: a calling agent's own signature over one call, for tools a policy marks sensitive.

When the policy decision sets `require_attestation`, the call must carry a compact JWS signed by
the key registered for the calling agent, whose JSON payload names exactly this call:
`tool` (canonical name), `args_hash` (SHA-256 hex of the canonical JSON arguments), `call_id`
and `iat` (seconds, within the window of now either way). Each attestation is good once: it is
remembered in the replay cache DPoP proofs use, shared by every replica.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from joserfc import jws
from joserfc.errors import JoseError
from joserfc.jwk import JWKRegistry

from colonnade.governance.identity.agent_book import AgentBook
from colonnade.governance.identity.dpop import DPOP_ALGORITHMS, FirstUse
from colonnade.governance.principal import Principal, PrincipalKind

__all__ = [
    "ATTESTATION_ALGORITHMS",
    "Attestation",
    "AttestationRefusal",
    "AttestationVerifier",
    "AttestedCall",
]

ATTESTATION_ALGORITHMS = DPOP_ALGORITHMS


@dataclass(frozen=True, slots=True)
class Attestation:
    """A verified attestation, as the audit record keeps it (never the token itself)."""

    agent: str
    key_thumbprint: str
    issued_at: int
    token_sha256: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "verified": True,
            "agent": self.agent,
            "key_thumbprint": self.key_thumbprint,
            "iat": self.issued_at,
            "token_sha256": self.token_sha256,
        }


@dataclass(frozen=True, slots=True)
class AttestationRefusal:
    code: str
    message: str


@dataclass(frozen=True, slots=True)
class AttestedCall:
    """What the attestation must name."""

    tool: str
    args_hash: str
    call_id: str


class AttestationVerifier:
    def __init__(
        self,
        agents: AgentBook,
        first_use: FirstUse,
        *,
        window_s: int = 60,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.agents = agents
        self.first_use = first_use
        self.window_s = window_s
        self._clock = clock

    async def verify(
        self, token: str | None, principal: Principal, call: AttestedCall
    ) -> Attestation | AttestationRefusal:
        if not token:
            return _required("the call carries no attestation")
        if principal.kind is not PrincipalKind.AGENT:
            return _required(f"only a registered agent can attest a call, not a {principal.kind.value}")
        agent = self.agents.get(principal.id)
        if agent is None or agent.revoked_at is not None or agent.public_key is None:
            return _required(f"agent '{principal.id}' has no registered public key to attest with")
        try:
            key = JWKRegistry.import_key(agent.public_key)
            compact = jws.extract_compact(token.encode("ascii"))
            alg = compact.headers().get("alg")
            if alg not in ATTESTATION_ALGORITHMS or not jws.validate_compact(compact, key, algorithms=[alg]):
                return _invalid(f"the signature does not verify with agent '{agent.id}''s registered key")
            claims = json.loads(compact.payload or b"")
        except (JoseError, ValueError, UnicodeError, TypeError):
            return _invalid("the attestation is not a well-formed compact JWS")
        problem = self._mismatch(claims, call)
        if problem is not None:
            return _invalid(problem)
        digest = hashlib.sha256(token.encode("ascii")).hexdigest()
        issued = int(claims["iat"])
        keep_until = datetime.fromtimestamp(issued, UTC) + timedelta(seconds=2 * self.window_s)
        if not await self.first_use(f"attestation:{digest}", keep_until):
            return AttestationRefusal("A-AUTH-ATTESTATION-REPLAY", "this attestation was used before")
        return Attestation(agent.id, key.thumbprint(), issued, digest)

    def _mismatch(self, claims: Any, call: AttestedCall) -> str | None:
        if not isinstance(claims, dict):
            return "the attestation's payload is not a JSON object"
        issued = claims.get("iat")
        if not isinstance(issued, int | float) or isinstance(issued, bool):
            return "the attestation needs an iat (seconds since the epoch)"
        if abs(self._clock() - float(issued)) > self.window_s:
            return f"the attestation's iat is more than {self.window_s} s from now"
        for name, expected in (("tool", call.tool), ("args_hash", call.args_hash), ("call_id", call.call_id)):
            if claims.get(name) != expected:
                return f"the attestation is for another {name} than this call's"
        return None


def _required(message: str) -> AttestationRefusal:
    return AttestationRefusal("A-AUTH-ATTESTATION-REQUIRED", message)


def _invalid(message: str) -> AttestationRefusal:
    return AttestationRefusal("A-AUTH-ATTESTATION-INVALID", message)
