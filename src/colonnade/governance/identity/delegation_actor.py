"""The actor of a token exchange: a registered agent that proves it agrees to act (RFC 8693 `actor_token`).

The actor token is a short JWT the sub-agent signs with its registered key: `iss` and `sub` its
agent id, `aud` the token endpoint, an `exp` at most five minutes after its `iat`, and a `jti`
used once. Only a registered, unrevoked agent of the delegating principal's tenant with a
registered key may act: the delegated token is bound (`cnf.jkt`) to that key, so the parent that
asks for it can hand it over, but never use it itself.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, TypeGuard

from joserfc import jws, jwt
from joserfc.errors import JoseError
from joserfc.jwk import JWKRegistry

from colonnade.governance.identity.agent_book import AgentBook
from colonnade.governance.identity.dpop import DPOP_ALGORITHMS, FirstUse
from colonnade.store.agents_repo import AgentRecord

__all__ = ["ACTOR_TOKEN_MAX_S", "ActorProblem", "ActorTokens"]

ACTOR_TOKEN_MAX_S = 300


class ActorProblem(Exception):
    """Why the actor token names no agent fit to act; the message says what to fix."""


class ActorTokens:
    def __init__(
        self,
        agents: AgentBook,
        first_use: FirstUse,
        *,
        leeway_s: int = 30,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.agents = agents
        self.first_use = first_use
        self.leeway_s = leeway_s
        self._clock = clock

    async def agent(self, actor_token: str, *, audience: str, tenant: str) -> AgentRecord:
        """The agent the actor token proves, or `ActorProblem`."""
        agent_id = _unverified_issuer(actor_token)
        agent = self.agents.get(agent_id)
        if agent is None or agent.tenant != tenant:
            raise ActorProblem(f"the actor {agent_id!r} is not a registered agent of the tenant {tenant}")
        if agent.revoked_at is not None:
            raise ActorProblem(f"the actor {agent_id!r} has been revoked")
        if agent.public_key is None or agent.key_thumbprint is None:
            raise ActorProblem(
                f"the actor {agent_id!r} has no registered key: a delegated token is bound to it, "
                "so register the agent with its public key first"
            )
        claims = self._verified(actor_token, agent.public_key)
        self._check(claims, agent_id, audience)
        once = hashlib.sha256(f"actor:{agent_id}:{claims['jti']}".encode()).hexdigest()
        keep = datetime.fromtimestamp(float(claims["exp"]), UTC) + timedelta(seconds=self.leeway_s)
        if not await self.first_use(once, keep):
            raise ActorProblem("this actor token was used before: sign a new one for each exchange")
        return agent

    def _verified(self, actor_token: str, public_key: dict[str, Any]) -> dict[str, Any]:
        try:
            key = JWKRegistry.import_key(public_key)
            token = jwt.decode(actor_token, key, algorithms=list(DPOP_ALGORITHMS))
        except (JoseError, ValueError, TypeError):
            raise ActorProblem(
                "the actor token's signature does not verify with the agent's registered key"
            ) from None
        return dict(token.claims)

    def _check(self, claims: dict[str, Any], agent_id: str, audience: str) -> None:
        now = self._clock()
        issued, expires, jti = claims.get("iat"), claims.get("exp"), claims.get("jti")
        if claims.get("sub") != agent_id:
            raise ActorProblem("the actor token's sub must be its iss: the agent's own id")
        aud = claims.get("aud")
        if aud != audience and not (isinstance(aud, list) and audience in aud):
            raise ActorProblem(f"the actor token's aud must be the token endpoint {audience}")
        if not _number(issued) or not _number(expires):
            raise ActorProblem("the actor token needs iat and exp")
        if float(expires) - float(issued) > ACTOR_TOKEN_MAX_S:
            raise ActorProblem(f"an actor token lives at most {ACTOR_TOKEN_MAX_S} s")
        if float(expires) < now - self.leeway_s or float(issued) > now + self.leeway_s:
            raise ActorProblem("the actor token has expired or is not valid yet")
        if not isinstance(jti, str) or not 8 <= len(jti) <= 256:
            raise ActorProblem("the actor token needs a jti (a unique id of at least 8 characters)")


def _unverified_issuer(actor_token: str) -> str:
    """Who the actor token says it is, read before its signature is checked against that agent's key."""
    try:
        compact = jws.extract_compact(actor_token.encode("ascii"))
        claims = json.loads(compact.payload or b"")
    except (JoseError, ValueError, UnicodeError, TypeError):
        raise ActorProblem("the actor_token is not a well-formed JWT") from None
    issuer = claims.get("iss") if isinstance(claims, dict) else None
    if not isinstance(issuer, str) or not issuer:
        raise ActorProblem("the actor token names its agent in iss")
    return issuer


def _number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)
