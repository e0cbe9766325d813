"""`Principal`: who makes a call. Every call carries one, whatever surface it came through.

Surfaces never trust caller-asserted body fields for identity: the HTTP edge (or, for stdio,
the configured local principal) decides who calls, and everything downstream (authorization,
idempotency scopes, audit) reads only this record.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from colonnade.governance.personas import PERSONA_SCOPES, Persona, persona_of

__all__ = ["ANONYMOUS_LOOPBACK", "CallerToken", "Principal", "PrincipalKind", "parse_principal_key"]


class PrincipalKind(StrEnum):
    USER = "user"
    AGENT = "agent"
    ANONYMOUS = "anonymous"
    SYSTEM = "system"
    """The gateway itself, e.g. committing or rolling back a prepared call in the background."""


@dataclass(frozen=True, slots=True)
class CallerToken:
    """The verified access token a caller sent, kept for upstreams that act on its behalf.

    Only the upstream credential modes `forward` and `exchange` read it; `token` never reaches a
    log, an audit record or a repr.
    """

    token: str = field(repr=False)
    issuer: str
    subject: str
    audiences: frozenset[str]
    expires_at: float


@dataclass(frozen=True, slots=True)
class Principal:
    """A caller: its kind and id, and what authorization reads (tenant, persona, scopes, allow-list).

    `tenant` None means the principal is not bound to one tenant (an operator, or the local user
    of an unauthenticated loopback gateway). `allowed_tools` is an agent's allow-list of canonical
    names with globs; None means no list applies. `scopes` are the effective ones (granted and
    allowed by the persona). `credential` says how it was authenticated (e.g. `api_key:k_...`),
    for audit records; it never holds the secret.
    """

    kind: PrincipalKind
    id: str
    tenant: str | None = None
    persona: str | None = None
    scopes: frozenset[str] = frozenset()
    allowed_tools: tuple[str, ...] | None = None
    team: str | None = None
    credential: str | None = None
    caller_token: CallerToken | None = field(default=None, repr=False, compare=False)
    """The caller's verified JWT when it authenticated with one (upstream credentials use it)."""
    actor_chain: tuple[str, ...] = ()
    """For a delegated token (RFC 8693 `act`): the principal keys the call acts through, from the
    origin (usually the person, `user:alice`) to this principal (the acting agent, last); empty
    when nobody delegated."""
    on_behalf_of: Principal | None = None
    """For a delegated token whose origin is a person: that person, with the delegated scopes.
    Authorization asks both, so a chain never does what its person may not."""

    def has(self, scope: str) -> bool:
        return scope in self.scopes

    @property
    def delegation_depth(self) -> int:
        """How many delegations (hops) separate this principal from the chain's origin; 0: none."""
        return max(len(self.actor_chain) - 1, 0)

    @property
    def key(self) -> str:
        """A stable string naming this principal, e.g. for idempotency scopes and audit records."""
        return f"{self.kind.value}:{self.id}"

    @classmethod
    def local(
        cls, id: str = "local", *, tenant: str | None = None, persona: str | None = "admin"
    ) -> Principal:
        """The user of a stdio server: whoever started the process (with every scope of its persona)."""
        known = persona_of(persona)
        scopes = PERSONA_SCOPES[known] if known is not None else frozenset()
        return cls(PrincipalKind.USER, id, tenant=tenant, persona=persona, scopes=scopes, credential="local")

    @classmethod
    def system(cls, id: str) -> Principal:
        """The gateway acting on its own behalf (one id per duty, so its keys never mix)."""
        admin = PERSONA_SCOPES[Persona.ADMIN]
        return cls(PrincipalKind.SYSTEM, id, persona="admin", scopes=admin, credential="system")


ANONYMOUS_LOOPBACK = Principal(PrincipalKind.ANONYMOUS, "loopback")
"""Every HTTP caller until authentication is configured: the gateway only listens on loopback then."""


NAMED_KINDS = (PrincipalKind.USER, PrincipalKind.AGENT)
"""The kinds a person may name in a subscription or an approval: the others are the gateway's own."""


def parse_principal_key(text: str, *, bare: PrincipalKind | None = None) -> tuple[PrincipalKind, str]:
    """`user:alice` or `agent:invoice-bot` as its kind and id; a ValueError says which form is expected.

    With `bare`, an id without a kind (`alice`) is of that kind. An id never starts with another
    kind's prefix (`user:user:alice` would be a second identity of alice, e.g. past four-eyes).
    """
    kinds = ", ".join(f"{kind.value}:<id>" for kind in NAMED_KINDS)
    if text != text.strip() or not text or len(text) > 256 or any(ch.isspace() for ch in text):
        raise ValueError(f"{text!r} is not a principal: give {kinds} (1 to 256 characters, no spaces)")
    prefix, colon, ident = text.partition(":")
    if not colon:
        if bare is None:
            raise ValueError(f"{text!r} names no kind: give {kinds} (e.g. user:{text})")
        return bare, text
    if prefix not in {kind.value for kind in NAMED_KINDS} or not ident:
        raise ValueError(f"{text!r} is not a principal: give {kinds} (e.g. user:alice, agent:invoice-bot)")
    if ident.partition(":")[0] in {kind.value for kind in PrincipalKind}:
        raise ValueError(f"{text!r} names a kind twice: give {kinds} (e.g. user:alice)")
    return PrincipalKind(prefix), ident
