"""The approval desk: asking for, deciding on and redeeming human approvals of calls.

The rules live here, for every surface alike (CLI, REST, MCP, the pages): an approval is seen by
its requester (the same principal key in the same tenant) and by the approvers of its tenant; the
requester never decides its own call (four-eyes); approvers hold a persona allowed for the tool's
API (`approvals.approvers`, default admins of the tenant); a decision is taken once
(compare-and-set), before the request expires. An approval yields one signed token bound to the
call; redeeming it checks the binding and spends it. Every action, and every refused one, is an audit record.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime, timedelta
from fnmatch import fnmatchcase
from typing import Any

from colonnade.calls.approvals.signing import MAX_TTL_S, ApprovalClaims, ApprovalSigner, BadToken
from colonnade.config import ApprovalSettings
from colonnade.governance.audit import AuditEvent, AuditLog, EventKind
from colonnade.governance.principal import Principal, PrincipalKind
from colonnade.governance.refusals import (
    ApprovalState,
    GovernanceRefusal,
    NotApprover,
    SelfApproval,
    UnknownResource,
)
from colonnade.governance.stewards import in_reach
from colonnade.store.approvals_repo import ApprovalRecord, ApprovalStore

__all__ = [
    "ApprovalDesk",
    "ApprovalRecord",
    "CallFacts",
    "TokenRefused",
    "approval_view",
    "is_requester",
    "principal_from",
    "resumer_refusal",
    "snapshot_of",
]


@dataclass(frozen=True, slots=True)
class CallFacts:
    """What an approval is bound to: the exact call, who asks, and the policy that asked for it."""

    tool: str
    version: str
    tenant: str
    input: dict[str, Any]
    input_hash: str
    requester: Principal
    reasons: tuple[str, ...] = ()
    policy_version: str | None = None
    call_id: str | None = None
    trace_id: str | None = None
    """The call's ids, so that its audit records and the approval's point at each other."""


class TokenRefused(Exception):
    """An approval token that cannot run this call; `code` is its registry code."""

    def __init__(self, code: str, message: str, approval_id: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.approval_id = approval_id


def snapshot_of(principal: Principal) -> dict[str, Any]:
    """The requester as authorized when it asked: resuming an approved call runs as this principal."""
    shown = asdict(principal)
    del shown["caller_token"]  # the caller's token is never stored; a resumed call runs without it
    shown["kind"] = principal.kind.value
    shown["scopes"] = sorted(principal.scopes)
    shown["allowed_tools"] = list(principal.allowed_tools) if principal.allowed_tools is not None else None
    shown["actor_chain"] = list(principal.actor_chain)
    person = principal.on_behalf_of
    shown["on_behalf_of"] = snapshot_of(person) if person is not None else None
    return shown


def principal_from(snapshot: dict[str, Any]) -> Principal:
    allowed = snapshot.get("allowed_tools")
    return Principal(
        PrincipalKind(snapshot["kind"]),
        snapshot["id"],
        tenant=snapshot.get("tenant"),
        persona=snapshot.get("persona"),
        scopes=frozenset(snapshot.get("scopes") or ()),
        allowed_tools=tuple(allowed) if allowed is not None else None,
        team=snapshot.get("team"),
        credential=snapshot.get("credential"),
        actor_chain=tuple(snapshot.get("actor_chain") or ()),
        on_behalf_of=principal_from(person)
        if isinstance(person := snapshot.get("on_behalf_of"), dict)
        else None,
    )


def is_requester(actor: Principal, record: ApprovalRecord) -> bool:
    """Whether the actor asked for this approval: its key, in its tenant (two tenants may share a key)."""
    return actor.key == record.requester and actor.tenant == record.requester_principal.get("tenant")


def resumer_refusal(actor: Principal, record: ApprovalRecord) -> str | None:
    """Why the actor may not resume this approved call (None: it may): only its requester, the approver
    who approved it (in the call's tenant), or the gateway itself may."""
    if actor.kind is PrincipalKind.SYSTEM or is_requester(actor, record):
        return None
    if record.approver is not None and actor.key == record.approver and in_reach(actor, record.tenant):
        return None
    return f"only the requester or the approver of {record.id} may resume it; {actor.key} is neither"


def approval_view(record: ApprovalRecord, actor: Principal | None = None) -> dict[str, Any]:
    """An approval as plain data; the token only for its requester (it is useless to anyone else)."""
    shown: dict[str, Any] = {
        "id": record.id,
        "state": record.state,
        "tenant": record.tenant,
        "tool": record.tool,
        "version": record.version,
        "arguments": record.input,
        "arguments_sha256": record.input_hash,
        "requester": record.requester,
        "reasons": list(record.reasons),
        "policy_version": record.policy_version,
        "confirmed_by_user": record.confirmed_by is not None,
        "approver": record.approver,
        "comment": record.comment,
        "created_at": record.created_at.isoformat(),
        "expires_at": record.expires_at.isoformat(),
        "decided_at": record.decided_at.isoformat() if record.decided_at else None,
        "token_expires_at": record.token_expires_at.isoformat() if record.token_expires_at else None,
    }
    if actor is not None and is_requester(actor, record) and record.state == "approved":
        shown["token"] = record.token
    return shown


class ApprovalDesk:
    def __init__(
        self,
        store: ApprovalStore,
        signer: ApprovalSigner,
        settings: ApprovalSettings | None = None,
        audit: AuditLog | None = None,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.signer = signer
        self.settings = settings if settings is not None else ApprovalSettings()
        self.audit = audit
        self.clock = clock
        self.observer: Callable[[str, float | None], None] | None = None
        """Told of each approval requested, approved, denied or expired, with the wait until its end
        (the gateway's `ApprovalMetrics.record`)."""

    def _now(self) -> datetime:
        return datetime.fromtimestamp(self.clock(), UTC)

    def approvers_for(self, tool: str) -> tuple[str, ...]:
        """The personas that may approve calls of `tool` (a canonical name `tenant:api:operation`)."""
        api = ":".join(tool.split(":")[:2])
        for pattern, personas in self.settings.approvers.items():
            if fnmatchcase(api, pattern):
                return tuple(personas)
        return tuple(self.settings.default_approvers)

    # -- asking ----------------------------------------------------------------------------------

    async def ask(self, approval_id: str, facts: CallFacts, expires_at: datetime) -> ApprovalRecord:
        now = self._now()
        record = ApprovalRecord(
            id=approval_id,
            tenant=facts.tenant,
            tool=facts.tool,
            version=facts.version,
            requester=facts.requester.key,
            requester_principal=snapshot_of(facts.requester),
            input=dict(facts.input),
            input_hash=facts.input_hash,
            reasons=facts.reasons,
            policy_version=facts.policy_version,
            state="pending",
            expires_at=expires_at,
            created_at=now,
            updated_at=now,
        )
        await self.store.create(record)
        await self._audit(facts.requester, EventKind.APPROVAL_REQUEST, record, call=facts)
        return record

    async def confirm(self, actor: Principal, approval_id: str, *, accepted: bool) -> ApprovalRecord:
        """The requesting user's own answer (MCP elicitation): recorded; declining withdraws the call."""
        record = await self._get(actor, approval_id)
        if not is_requester(actor, record):
            raise UnknownResource(f"no approval {approval_id!r} of yours")
        if accepted:
            if not await self.store.confirm(approval_id, actor.key):
                raise ApprovalState(f"approval {approval_id} is {record.state}; nothing to confirm")
            record = replace(record, confirmed_by=actor.key)
            await self._audit(actor, EventKind.APPROVAL_CONFIRM, record)
            return record
        return await self._decide(actor, record, "denied", "declined by the requesting user", own=True)

    # -- deciding --------------------------------------------------------------------------------

    async def list(self, actor: Principal, state: str | None = None) -> list[ApprovalRecord]:
        """What the actor may see: its own requests, and those it may decide on."""
        tenant = actor.tenant if actor.kind is not PrincipalKind.SYSTEM else None
        records = await self.store.list(tenant=tenant, state=state)
        return [record for record in records if self._sees(actor, record)]

    async def show(self, actor: Principal, approval_id: str) -> ApprovalRecord:
        return await self._get(actor, approval_id)

    async def find(self, approval_id: str) -> ApprovalRecord | None:
        """The approval, or None, for a surface that checks who may see it itself (MCP confirmation)."""
        return await self.store.get(approval_id)

    async def approve(self, actor: Principal, approval_id: str, comment: str | None = None) -> ApprovalRecord:
        record = await self._decidable(actor, approval_id)
        return await self._decide(actor, record, "approved", comment)

    async def deny(self, actor: Principal, approval_id: str, comment: str | None = None) -> ApprovalRecord:
        record = await self._decidable(actor, approval_id)
        return await self._decide(actor, record, "denied", comment)

    async def _decidable(self, actor: Principal, approval_id: str) -> ApprovalRecord:
        """An approval of the actor's tenant it may decide on; in its tenant, refusals say why."""
        record = await self.store.get(approval_id)
        if record is None or not (in_reach(actor, record.tenant) or is_requester(actor, record)):
            raise UnknownResource(f"no approval {approval_id!r}")
        try:
            if record.requester in (actor.key, actor.id):
                raise SelfApproval(f"{actor.key} asked for this call and cannot decide on it (four-eyes)")
            if not self._may_decide(actor, record):
                allowed = ", ".join(self.approvers_for(record.tool))
                raise NotApprover(
                    f"approving calls of {record.tool} needs one of the personas {allowed} in tenant "
                    f"{record.tenant}; {actor.key} is {actor.persona or 'without a persona'}"
                )
        except GovernanceRefusal as refused:
            await self._refused(actor, record, refused.code, refused.message)
            raise
        return record

    async def _decide(
        self, actor: Principal, record: ApprovalRecord, target: str, comment: str | None, *, own: bool = False
    ) -> ApprovalRecord:
        now = self._now()
        changes: dict[str, Any] = {"approver": actor.key, "comment": comment, "decided_at": now}
        if target == "approved":
            ttl = min(self.settings.token_ttl_s, MAX_TTL_S)
            claims = ApprovalClaims(
                approval_id=record.id,
                tool=record.tool,
                version=record.version,
                args_sha256=record.input_hash,
                tenant=record.tenant,
                requester=record.requester,
                approver=actor.key,
                policy_version=record.policy_version,
                issued_at=int(now.timestamp()),
                expires_at=int(now.timestamp()) + ttl,
            )
            changes["token"] = self.signer.sign(claims)
            changes["token_expires_at"] = now + timedelta(seconds=ttl)
        if not await self.store.transition(record.id, "pending", target, now=now, **changes):  # type: ignore[arg-type]
            current = await self.store.get(record.id) or record
            state = "expired" if current.state == "pending" else current.state
            message = f"approval {record.id} is {state}; it cannot be {target} now"
            await self._refused(actor, current, ApprovalState.code, message)
            raise ApprovalState(message)
        decided = replace(record, state=target, updated_at=now, **changes)
        kind = EventKind.APPROVAL_APPROVE if target == "approved" else EventKind.APPROVAL_DENY
        await self._audit(actor, kind, decided, comment=comment, by_requester=own)
        return decided

    # -- redeeming -------------------------------------------------------------------------------

    async def redeem(self, token: str, facts: CallFacts) -> ApprovalRecord:
        """Spend the token on this call, or raise `TokenRefused` (audited) saying why not."""
        try:
            claims = self.signer.verify(token)
        except BadToken as exc:
            raise await self._token_refused(facts, None, "A-AUTH-APPROVAL-TOKEN", str(exc)) from None
        bound = {
            "tool": (claims.tool, facts.tool),
            "version": (claims.version, facts.version),
            "tenant": (claims.tenant, facts.tenant),
            "requester": (claims.requester, facts.requester.key),
            "policy version": (claims.policy_version, facts.policy_version),
        }
        other = [name for name, (approved, asked) in bound.items() if approved != asked]
        if other:
            message = f"the approval token was issued for another {', '.join(other)}"
            raise await self._token_refused(facts, claims.approval_id, "A-AUTH-APPROVAL-TOKEN", message)
        if claims.args_sha256 != facts.input_hash:
            message = "the arguments differ from the approved ones (their SHA-256 does not match the token)"
            raise await self._token_refused(facts, claims.approval_id, "A-AUTH-APPROVAL-ARGUMENTS", message)
        record = await self.store.get(claims.approval_id)
        if record is None:
            raise await self._token_refused(
                facts, claims.approval_id, "A-AUTH-APPROVAL-TOKEN", "the approval is unknown"
            )
        if not is_requester(facts.requester, record):
            message = "the approval token was issued for another requester (the same id in another tenant)"
            raise await self._token_refused(facts, record.id, "A-AUTH-APPROVAL-TOKEN", message)
        if record.state == "used":
            message = f"the token of approval {record.id} was used already"
            raise await self._token_refused(facts, record.id, "A-AUTH-APPROVAL-REPLAY", message)
        if claims.expires_at <= self.clock():
            await self.store.transition(record.id, "approved", "expired")
            message = f"the token of approval {record.id} expired at {_iso(claims.expires_at)}"
            raise await self._token_refused(facts, record.id, "A-AUTH-APPROVAL-EXPIRED", message)
        if record.state != "approved" or not await self.store.transition(record.id, "approved", "used"):
            current = await self.store.get(record.id) or record
            code = "A-AUTH-APPROVAL-REPLAY" if current.state == "used" else "A-AUTH-APPROVAL-TOKEN"
            message = f"approval {record.id} is {current.state}; its token cannot run a call"
            raise await self._token_refused(facts, record.id, code, message)
        used = replace(record, state="used")
        await self._audit(facts.requester, EventKind.APPROVAL_USE, used, call=facts)
        return used

    async def round_approval(self, approval_id: str, token: str | None, facts: CallFacts) -> ApprovalRecord:
        """The approval an answer round continues, if it may: still in use for exactly this call.

        The same approved call again, answering its tool's question, spends nothing new; a token
        sent along (the SDK client resends the call's `_meta`) must be this approval's own.
        Refusals raise `TokenRefused` (audited).
        """
        record = await self.store.get(approval_id)
        if record is None or record.state != "used":
            state = record.state if record is not None else "unknown"
            message = f"approval {approval_id} is {state}; an answer to its tool's question cannot run"
            raise await self._token_refused(facts, approval_id, "A-AUTH-APPROVAL-TOKEN", message)
        if record.input_hash != facts.input_hash or record.tool != facts.tool:
            message = "the answer round names other arguments or another tool than the approved call"
            raise await self._token_refused(facts, approval_id, "A-AUTH-APPROVAL-ARGUMENTS", message)
        if token is not None:
            try:
                claims = self.signer.verify(token)
            except BadToken as exc:
                code = "A-AUTH-APPROVAL-TOKEN"
                raise await self._token_refused(facts, approval_id, code, str(exc)) from None
            if claims.approval_id != approval_id:
                message = f"the approval token is not the one approval {approval_id} issued"
                raise await self._token_refused(facts, approval_id, "A-AUTH-APPROVAL-TOKEN", message)
        return record

    async def round_used(self, record: ApprovalRecord, facts: CallFacts) -> None:
        """Audit an answer round taken: a use of the approval, marked as the answer to a question."""
        await self._audit(facts.requester, EventKind.APPROVAL_USE, record, call=facts, round="answer")

    async def refuse_round(
        self, facts: CallFacts, approval_id: str | None, code: str, message: str
    ) -> TokenRefused:
        """Audit an answer round refused before the approval was read (unknown, replayed, expired)."""
        return await self._token_refused(facts, approval_id, code, message)

    async def refuse_run(self, actor: Principal, record: ApprovalRecord, code: str, message: str) -> None:
        """Audit an approved call that may not run now (its requester's credential is gone)."""
        await self._refused(actor, record, code, message)

    async def refuse_unseen_run(self, actor: Principal, approval_id: str) -> None:
        """Audit a resume of an approval the actor may not see (it is answered as unknown)."""
        record = await self.store.get(approval_id)
        if record is None:
            return
        elsewhere = not in_reach(actor, record.tenant)
        code = "A-AUTH-RESUME-TENANT" if elsewhere else "A-AUTH-RESUME-PRINCIPAL"
        message = f"{actor.key} may not resume approval {approval_id}" + (
            f" of tenant {record.tenant}" if elsewhere else ""
        )
        await self._refused(actor, record, code, message)

    async def expire(self, approval_id: str) -> None:
        """The parked call expired: a request nobody decided on, or a token nobody used, ends."""
        record = await self.store.get(approval_id)
        if record is None:
            return
        for state in ("pending", "approved"):
            if record.state == state and await self.store.transition(approval_id, state, "expired"):
                await self._audit(None, EventKind.APPROVAL_EXPIRE, replace(record, state="expired"))

    # -- helpers ---------------------------------------------------------------------------------

    async def _get(self, actor: Principal, approval_id: str) -> ApprovalRecord:
        record = await self.store.get(approval_id)
        if record is None or not self._sees(actor, record):
            raise UnknownResource(f"no approval {approval_id!r}")
        return record

    def _sees(self, actor: Principal, record: ApprovalRecord) -> bool:
        return is_requester(actor, record) or (
            in_reach(actor, record.tenant)
            and (actor.kind is PrincipalKind.SYSTEM or self._has_persona(actor, record))
        )

    def _may_decide(self, actor: Principal, record: ApprovalRecord) -> bool:
        return in_reach(actor, record.tenant) and (
            actor.kind is PrincipalKind.SYSTEM or self._has_persona(actor, record)
        )

    def _has_persona(self, actor: Principal, record: ApprovalRecord) -> bool:
        return actor.persona is not None and actor.persona in self.approvers_for(record.tool)

    async def _token_refused(
        self, facts: CallFacts, approval_id: str | None, code: str, message: str
    ) -> TokenRefused:
        if self.audit is not None:
            event = AuditEvent.by(
                facts.requester,
                EventKind.APPROVAL_REFUSE,
                tenant=facts.tenant,
                tool=facts.tool,
                decision="deny",
                code=code,
                reasons=(message,),
                call_id=facts.call_id,
                trace_id=facts.trace_id,
                details={"approval_id": approval_id, "args_sha256": facts.input_hash},
            )
            await self.audit.append(event)
        return TokenRefused(code, message, approval_id)

    async def _refused(self, actor: Principal, record: ApprovalRecord, code: str, message: str) -> None:
        if self.audit is not None:
            event = AuditEvent.by(
                actor,
                EventKind.APPROVAL_REFUSE,
                tenant=record.tenant,
                tool=record.tool,
                decision="deny",
                code=code,
                reasons=(message,),
                details={"approval_id": record.id, "requester": record.requester},
            )
            await self.audit.append(event)

    async def _audit(
        self,
        actor: Principal | None,
        kind: EventKind,
        record: ApprovalRecord,
        *,
        call: CallFacts | None = None,
        **extra: Any,
    ) -> None:
        event_name = _OBSERVED.get(kind)
        if self.observer is not None and event_name is not None:
            ended = record.decided_at if record.decided_at is not None else self._now()
            waited = (
                None if kind is EventKind.APPROVAL_REQUEST else (ended - record.created_at).total_seconds()
            )
            self.observer(event_name, waited)
        if self.audit is None:
            return
        details = {
            "approval_id": record.id,
            "requester": record.requester,
            "state": record.state,
            "args_sha256": record.input_hash,
            "reasons": list(record.reasons),
            "policy_version": record.policy_version,
            **{name: value for name, value in extra.items() if value is not None},
        }
        who = actor if actor is not None else Principal.system("approvals")
        event = AuditEvent.by(
            who,
            kind,
            tenant=record.tenant,
            tool=record.tool,
            call_id=call.call_id if call is not None else None,
            trace_id=call.trace_id if call is not None else None,
            details=details,
        )
        await self.audit.append(event)


_OBSERVED = {
    EventKind.APPROVAL_REQUEST: "requested",
    EventKind.APPROVAL_APPROVE: "approved",
    EventKind.APPROVAL_DENY: "denied",
    EventKind.APPROVAL_EXPIRE: "expired",
}


def _iso(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat()
