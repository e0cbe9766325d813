"""Token exchange that narrows (RFC 8693): a principal hands a sub-agent a token no wider than its own.

The delegating principal presents its own access token (`subject_token`: a token of a trusted
issuer, of the development issuer, or a delegated token of this gateway), proving its key with a
DPoP proof when that token is bound; the sub-agent is named by an `actor_token` it signed with
its registered key. The issued token is this gateway's: `sub` the chain's origin (the person, or
the agent that began it), the actors in nested `act` claims (the sub-agent outermost), scopes and
tools each a subset of the parent's effective ones and of the sub-agent's allow-list (anything
wider is refused, naming it), bound to the sub-agent's registered key (`cnf.jkt`), living at most
`auth.delegation.max_ttl_s` and never past its parent, and at most `max_depth` delegations deep.
Every grant and every refusal is an audit record carrying the chain.
"""

from __future__ import annotations

import contextlib
import json
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from joserfc import jws
from joserfc.errors import JoseError

from colonnade.config import DelegationSettings
from colonnade.governance.audit import AuditEvent, AuditLog, AuditUnavailable, EventKind
from colonnade.governance.identity.authenticator import Authenticator, RequestFacts
from colonnade.governance.identity.confirmation import confirmation
from colonnade.governance.identity.delegated_tokens import ORIGIN_CLAIM, TOOLS_CLAIM, nested_act
from colonnade.governance.identity.delegation_actor import ActorProblem, ActorTokens
from colonnade.governance.identity.delegation_narrowing import SafeForAgents, narrow_scopes, narrow_tools
from colonnade.governance.identity.delegation_signing import DelegationSigner
from colonnade.governance.identity.failures import AuthFailure
from colonnade.governance.principal import Principal, PrincipalKind
from colonnade.store.agents_repo import AgentRecord

__all__ = [
    "ACCESS_TOKEN_TYPE",
    "JWT_TOKEN_TYPE",
    "TOKEN_EXCHANGE",
    "ExchangeRefusal",
    "ExchangeRequest",
    "IssuedToken",
    "TokenExchange",
    "delegation_issuer",
]

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"
JWT_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:jwt"
_SUBJECT_TYPES = frozenset({ACCESS_TOKEN_TYPE, JWT_TOKEN_TYPE})
_MIN_LIFETIME_S = 5


def delegation_issuer(resource: str) -> str:
    """The gateway's issuer identifier as an authorization server: its resource URL's origin."""
    parts = urlsplit(resource)
    return f"{parts.scheme}://{parts.netloc}"


@dataclass(frozen=True, slots=True)
class ExchangeRequest:
    """The form fields of one token request (RFC 8693 section 2.1), plus the tool allow-list asked for."""

    grant_type: str | None
    subject_token: str | None = field(default=None, repr=False)
    subject_token_type: str | None = None
    actor_token: str | None = field(default=None, repr=False)
    actor_token_type: str | None = None
    requested_token_type: str | None = None
    scope: str | None = None
    tools: str | None = None
    """Space-separated canonical tool names and globs (the `tools` parameter); none: the widest allowed."""


@dataclass(frozen=True, slots=True)
class IssuedToken:
    """The RFC 8693 section 2.2.1 answer."""

    access_token: str = field(repr=False)
    expires_in: int
    scopes: tuple[str, ...]
    tools: tuple[str, ...]
    actor_chain: tuple[str, ...]

    def response(self) -> dict[str, Any]:
        return {
            "access_token": self.access_token,
            "issued_token_type": ACCESS_TOKEN_TYPE,
            "token_type": "DPoP",
            "expires_in": self.expires_in,
            "scope": " ".join(self.scopes),
            TOOLS_CLAIM: list(self.tools),
            "colonnade_actor_chain": list(self.actor_chain),
        }


@dataclass(frozen=True, slots=True)
class ExchangeRefusal:
    """An RFC 6749 section 5.2 error with the registry code beside it."""

    error: str
    description: str
    code: str = "A-AUTH-DELEGATION"
    status: int = 400

    def response(self) -> dict[str, Any]:
        return {"error": self.error, "error_description": self.description, "code": self.code}


class TokenExchange:
    def __init__(
        self,
        settings: DelegationSettings,
        *,
        issuer: str,
        audience: str,
        signer: DelegationSigner,
        authenticator: Authenticator,
        actors: ActorTokens,
        audit: AuditLog | None = None,
        safe_for_agents: SafeForAgents = lambda name: False,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.safe_for_agents = safe_for_agents
        self.settings = settings
        self.issuer = issuer
        self.audience = audience
        self.signer = signer
        self.authenticator = authenticator
        self.actors = actors
        self.audit = audit
        self._clock = clock

    async def exchange(
        self, asked: ExchangeRequest, *, method: str, url: str, path: str, dpop: str | None
    ) -> IssuedToken | ExchangeRefusal:
        malformed = _malformed(asked)
        if malformed is not None:
            return malformed
        assert asked.subject_token is not None and asked.actor_token is not None
        if dpop and not _bound(asked.subject_token):
            return ExchangeRefusal(
                "invalid_request",
                "the DPoP header proves the subject token's key, and this subject token is not bound: "
                "send it without a DPoP header (the new token is bound to the actor's registered key)",
            )
        scheme = "DPoP" if dpop else "Bearer"
        facts = RequestFacts(method, url, path, authorization=f"{scheme} {asked.subject_token}", dpop=dpop)
        parent = await self.authenticator.authenticate(facts)
        if isinstance(parent, AuthFailure):
            if parent.status >= 500:  # e.g. the issuer's keys cannot be fetched: try again later
                return ExchangeRefusal("temporarily_unavailable", parent.message, parent.code, parent.status)
            return ExchangeRefusal("invalid_grant", f"subject_token: {parent.message}", parent.code)
        outcome = await self._grant(parent, asked, url)
        if isinstance(outcome, ExchangeRefusal):
            await self._record(AuditEvent.by(parent, EventKind.DELEGATION_REFUSE, **_refused(outcome)))
        return outcome

    async def _grant(
        self, parent: Principal, asked: ExchangeRequest, url: str
    ) -> IssuedToken | ExchangeRefusal:
        assert asked.actor_token is not None
        if parent.caller_token is None:
            return ExchangeRefusal(
                "invalid_request", "subject_token must be an access token (JWT), not an API key"
            )
        if parent.kind not in (PrincipalKind.USER, PrincipalKind.AGENT) or parent.tenant is None:
            return ExchangeRefusal(
                "invalid_grant",
                "only a person or an agent of one tenant may delegate (a chain lives in one tenant)",
            )
        try:
            actor = await self.actors.agent(asked.actor_token, audience=url, tenant=parent.tenant)
        except ActorProblem as problem:
            return ExchangeRefusal("invalid_request", f"actor_token: {problem}")
        chain = (*(parent.actor_chain or (parent.key,)), f"agent:{actor.id}")
        refused = self._chain_problem(chain)
        if refused is not None:
            return refused
        bounds = [parent.allowed_tools, actor.allowed_tools]
        tools = narrow_tools(_words(asked.tools), bounds, self.safe_for_agents)
        if tools.wider:
            return ExchangeRefusal(
                "invalid_target",
                f"the tools {', '.join(tools.wider)} are wider than {parent.key}'s and {actor.id}'s "
                "allow-lists allow: ask for tools both cover",
            )
        if not tools.granted:
            return ExchangeRefusal(
                "invalid_target", f"no tool is allowed to both {parent.key} and {actor.id}"
            )
        person = parent.on_behalf_of
        scopes = narrow_scopes(_words(asked.scope), (person or parent).scopes)
        if scopes.wider:
            return ExchangeRefusal(
                "invalid_scope", f"the scopes {', '.join(scopes.wider)} are wider than {parent.key} holds"
            )
        now = int(self._clock())
        expires = min(now + self.settings.max_ttl_s, int(parent.caller_token.expires_at))
        if expires - now < _MIN_LIFETIME_S:
            return ExchangeRefusal(
                "invalid_grant", "subject_token expires too soon to delegate: renew it first"
            )
        claims = self._claims(parent, actor, chain, scopes.granted, tools.granted, now, expires)
        issued = IssuedToken(self.signer.sign(claims), expires - now, scopes.granted, tools.granted, chain)
        details = {
            "actor": actor.id,
            "depth": len(chain) - 1,
            "tools": list(tools.granted),
            "jti": claims["jti"],
        }
        grant = AuditEvent.by(
            parent,
            EventKind.DELEGATION_GRANT,
            decision="allow",
            outcome="issued",
            actor_chain=chain,
            details={**details, "scopes": list(scopes.granted), "expires_in": expires - now},
        )
        await self._record(grant)
        return issued

    def _chain_problem(self, chain: tuple[str, ...]) -> ExchangeRefusal | None:
        depth = len(chain) - 1
        if depth > self.settings.max_depth:
            return ExchangeRefusal(
                "invalid_request",
                f"the chain would be {depth} delegations deep; "
                f"auth.delegation.max_depth allows {self.settings.max_depth}",
            )
        if len(set(chain)) != len(chain):
            return ExchangeRefusal(
                "invalid_request", f"{chain[-1]} is in the chain already: a chain has no loops"
            )
        return None

    def _claims(
        self,
        parent: Principal,
        actor: AgentRecord,
        chain: tuple[str, ...],
        scopes: tuple[str, ...],
        tools: tuple[str, ...],
        now: int,
        expires: int,
    ) -> dict[str, Any]:
        origin_kind, _, origin_id = chain[0].partition(":")
        person = parent.on_behalf_of or (parent if parent.kind is PrincipalKind.USER else None)
        actors = tuple(key.partition(":")[2] for key in chain[1:])
        claims: dict[str, Any] = {
            "iss": self.issuer,
            "aud": self.audience,
            "sub": origin_id,
            ORIGIN_CLAIM: origin_kind,
            "tenant": parent.tenant,
            "act": nested_act(actors),
            "scope": " ".join(scopes),
            TOOLS_CLAIM: list(tools),
            "cnf": {"jkt": actor.key_thumbprint},
            "iat": now,
            "nbf": now,
            "exp": expires,
            "jti": uuid.uuid4().hex,
        }
        if person is not None:
            claims["persona"] = person.persona
            if person.team is not None:
                claims["team"] = person.team
        return claims

    async def _record(self, event: AuditEvent) -> None:
        if self.audit is not None:
            with contextlib.suppress(AuditUnavailable):  # a refusal is answered either way
                await self.audit.append(event)


def _malformed(asked: ExchangeRequest) -> ExchangeRefusal | None:
    if asked.grant_type != TOKEN_EXCHANGE:
        return ExchangeRefusal(
            "unsupported_grant_type", f"this token endpoint serves grant_type={TOKEN_EXCHANGE} only"
        )
    if not asked.subject_token:
        return ExchangeRefusal(
            "invalid_request", "subject_token is missing: send the delegating principal's token"
        )
    if asked.subject_token_type not in _SUBJECT_TYPES:
        return ExchangeRefusal(
            "invalid_request", f"subject_token_type must be {ACCESS_TOKEN_TYPE} (or {JWT_TOKEN_TYPE})"
        )
    if not asked.actor_token or asked.actor_token_type != JWT_TOKEN_TYPE:
        return ExchangeRefusal(
            "invalid_request",
            f"name the sub-agent with an actor_token (a JWT it signed) and actor_token_type={JWT_TOKEN_TYPE}",
        )
    if asked.requested_token_type not in (None, ACCESS_TOKEN_TYPE):
        return ExchangeRefusal("invalid_request", f"requested_token_type must be {ACCESS_TOKEN_TYPE}")
    return None


def _bound(token: str) -> bool:
    """Whether a token says it is bound to a key (read unverified: only to word a refusal)."""
    try:
        claims = json.loads(jws.extract_compact(token.encode("ascii")).payload or b"")
    except (JoseError, ValueError, UnicodeError, TypeError):
        return True  # let the authenticator say what is wrong with it
    return not isinstance(claims, dict) or confirmation(claims).key is not None


def _words(text: str | None) -> tuple[str, ...] | None:
    if text is None or not text.strip():
        return None
    return tuple(text.split())


def _refused(refusal: ExchangeRefusal) -> Mapping[str, Any]:
    return {
        "decision": "deny",
        "outcome": "refused",
        "code": refusal.code,
        "reasons": (refusal.description,),
        "details": {"error": refusal.error},
    }
