"""Who may commit, discard or resume a parked call: its owner, in its tenant, if it may call the tool now.

A parked call's token is a bearer secret, but holding it is not enough. The principal resuming must
be the one that parked the call (same key and same tenant: two tenants may each have a
`user:alice`), and it must still be allowed to call the parked call's tool: the pipeline's own
authorize and policy stages judge it, as they would a fresh call with the parked arguments, so a
subscription revoked, an allow-list narrowed or a policy changed since the call was parked
applies. The gateway itself (a system principal) is always admitted. Every resume, admitted or
refused, is noted for the audit record of the call that asked, with the parked call's id.
"""

from __future__ import annotations

from dataclasses import dataclass

from colonnade.calls.call import Call
from colonnade.calls.call_errors import error
from colonnade.calls.decision_note import note_resume, taking_note
from colonnade.calls.envelope import CallRequest, CallResult, CallStatus
from colonnade.calls.manifest import Manifests
from colonnade.calls.pipeline import Next, Pipeline, Stage
from colonnade.calls.stages.authorize import Authorize
from colonnade.calls.stages.policy import PolicyCheck
from colonnade.catalog.catalog import Catalog
from colonnade.governance.authorization import Authorizer
from colonnade.governance.policy.gate import PolicyGate
from colonnade.governance.principal import Principal, PrincipalKind
from colonnade.store.parked_calls_repo import ParkedRecord

__all__ = ["ParkedOwner", "ResumeAuthority"]


@dataclass(frozen=True, slots=True)
class ParkedOwner:
    """Who a parked call is bound to, and what it is: the facts a resume is judged against."""

    key: str
    tenant: str | None
    tool: str
    version: str
    call_id: str | None
    reason: str

    @classmethod
    def of(cls, record: ParkedRecord) -> ParkedOwner:
        return cls(
            record.principal, record.tenant, record.tool, record.version, record.call_id, record.reason
        )


_OTHER_TENANT = "A-AUTH-RESUME-TENANT"


class _Admitted:
    """The end of the authorization stages: reaching it means they let the call through."""

    async def __call__(self, call: Call, next: Next) -> CallResult:
        return call.result(CallStatus.SUCCESS)


class ResumeAuthority:
    """Admits or refuses the principal resuming a parked call (see the module's docstring)."""

    def __init__(
        self,
        catalog: Catalog,
        authorizer: Authorizer | None,
        policy: PolicyGate | None = None,
        manifests: Manifests | None = None,
    ) -> None:
        self.catalog = catalog
        self.manifests = manifests if manifests is not None else Manifests()
        stages: list[Stage] = [Authorize(authorizer)]
        if policy is not None:
            stages.append(PolicyCheck(policy))
        self._stages = Pipeline([*stages, _Admitted()])

    async def check(
        self,
        owner: ParkedOwner,
        principal: Principal,
        *,
        doing: str,
        call_id: str | None,
        input: dict[str, object],
    ) -> CallResult | None:
        """None when `principal` may `doing` (commit, discard, resume) the parked call; else the refusal."""
        refusal = await self._refusal(owner, principal, doing, input)
        note_resume(
            {
                "parked_call_id": owner.call_id,
                "parked_tool": owner.tool,
                "reason": owner.reason,
                "doing": doing,
                "refused": refusal[1] if refusal is not None else None,
            }
        )
        if refusal is None:
            return None
        code, message = refusal
        # Another tenant's caller learns nothing about the call (its audit record says which it was).
        shown = {} if code == _OTHER_TENANT else {"parked_call_id": owner.call_id, "tool": owner.tool}
        status, err = error(code, message, **shown)
        return CallResult(call_id=call_id or owner.call_id or "", status=status, error=err)

    async def _refusal(
        self, owner: ParkedOwner, principal: Principal, doing: str, input: dict[str, object]
    ) -> tuple[str, str] | None:
        if principal.kind is PrincipalKind.SYSTEM:
            return None
        what = (
            f"the parked call {owner.call_id} of {owner.tool}"
            if owner.call_id
            else f"the parked call of {owner.tool}"
        )
        if principal.tenant != owner.tenant:  # a tenant-less owner (an operator) is no tenant's user
            return (
                _OTHER_TENANT,
                f"this parked call belongs to another tenant; {principal.key} may not {doing} it",
            )
        if principal.key != owner.key:
            return (
                "A-AUTH-RESUME-PRINCIPAL",
                f"only the principal that made {what} may {doing} it; {principal.key} did not make it",
            )
        return await self._tool_refusal(owner, principal, doing, input)

    async def _tool_refusal(
        self, owner: ParkedOwner, principal: Principal, doing: str, input: dict[str, object]
    ) -> tuple[str, str] | None:
        """What the authorize and policy stages say now of this principal calling the parked tool."""
        tool = self.catalog.tool_versions(owner.tool).get(owner.version)
        if tool is None:
            return None  # the handler answers a tool that is gone (S-TOOL-CONFIG)
        request = CallRequest(tool_id=owner.tool, tool_version=owner.version, input=input)
        call = Call.start(request, tool, self.manifests.for_tool(tool), principal=principal)
        with taking_note():  # the stages' notes are about this check, not the call that asked
            result = await self._stages.run(call)
        if result.status is CallStatus.SUCCESS:
            return None
        err = result.error
        if err is not None and err.code.startswith("A-AUTH-"):
            return err.code, f"{principal.key} may not {doing} the parked call now: {err.message}"
        return (
            "A-AUTH-RESUME-TOOL",
            f"{principal.key} may no longer call {owner.tool}, so it may not {doing} it",
        )
