"""Guardrails: the detectors' findings on a call's arguments and result, acted on and audited.

It runs after authorization and before the policy stage, so that the policies read the findings
on the arguments (`input.guardrails.arguments`) and the labels the call's session touched so far
(`input.flow.labels`). On the arguments a finding can refuse the call (`A-AUTH-GUARDRAIL-BLOCKED`),
hide the value before the tool sees it, or ask a human's approval (an obligation the approval gate
honours). It wraps everything that can produce a result, so that a result (a replay included) is
scanned on its way out: a finding there can withhold it (`D-DATA-GUARDRAIL-BLOCKED`) or hide the
value. The audit record gets kinds, paths and counts, never a value. A call that answered adds its
tool's flow labels to its session, and `ingests_untrusted` when its result holds instructions aimed
at the model; the built-in flow rule then parks a later `egress` call of that session for approval
(`flow.approve_egress_after_untrusted`). Built-in tools are left alone, as by the policy stage.
"""

from __future__ import annotations

from typing import Any

from colonnade.calls.call import Call
from colonnade.calls.call_errors import error
from colonnade.calls.decision_note import note_guardrails
from colonnade.calls.envelope import CallResult, CallStatus
from colonnade.calls.pipeline import Next
from colonnade.catalog.tool import Tool
from colonnade.config import GuardrailSettings
from colonnade.governance.flow import FlowLabels, flow_key
from colonnade.governance.guardrails.actions import ToolGuardrails, actions_for
from colonnade.governance.guardrails.scan import GuardFinding, Scanner
from colonnade.governance.obligations import Obligations

__all__ = ["Guardrails"]

_INJECTION = "prompt_injection"
_UNTRUSTED = "ingests_untrusted"
_EGRESS = "egress"


class Guardrails:
    def __init__(
        self,
        settings: GuardrailSettings,
        flow: FlowLabels | None = None,
        *,
        approve_egress_after_untrusted: bool = True,
    ) -> None:
        self.settings = settings
        self.scanner = Scanner(settings.detectors if settings.enabled else ())
        self.flow = flow
        self.approve_egress = approve_egress_after_untrusted
        self._actions: dict[int, tuple[Tool, ToolGuardrails]] = {}

    async def __call__(self, call: Call, next: Next) -> CallResult:
        tool = call.tool
        if tool.builtin:
            return await next(call)
        actions = self._actions_of(tool)
        found = self._scan(call.request.input, actions)
        key = self._flow_key(call)
        labels = await self.flow.touched(key) if self.flow is not None and key is not None else []
        record: dict[str, Any] = {"arguments": _listed(found)} if found else {}
        blocked = _acted(found, actions.arguments, "block")
        if blocked:
            note_guardrails({**record, "action": "block"})
            status, err = error(
                "A-AUTH-GUARDRAIL-BLOCKED",
                f"the arguments of '{tool.canonical_name}' carry {_kinds(blocked)}, which a guardrail blocks",
                findings=_listed(blocked),
            )
            return call.result(status, error=err)
        call = self._prepared(call, found, actions, labels)
        result = await next(call)
        if result.output is not None and self.scanner.kinds:
            result, record = self._screened(call, result, actions, record)
        if record:
            note_guardrails(record)
        if self.flow is not None and key is not None and result.status is CallStatus.SUCCESS:
            raised = _raised(tool, record)
            if raised:
                await self.flow.raise_labels(key, raised)
        return result

    def _prepared(
        self, call: Call, found: tuple[GuardFinding, ...], actions: ToolGuardrails, labels: list[str] | None
    ) -> Call:
        """The call with its arguments' values hidden where asked, approval owed, and the policy context.

        `labels` None: the session's flow cannot be read (shared state away)."""
        flow = {"labels": labels or [], "known": labels is not None}
        changes: dict[str, Any] = {
            "policy_context": {"guardrails": {"arguments": _listed(found)}, "flow": flow}
        }
        redacted = _acted(found, actions.arguments, "redact")
        if redacted:
            hidden = self.scanner.redacted(call.request.input, {f.kind for f in redacted})
            changes["request"] = call.request.model_copy(update={"input": hidden})
        reasons = []
        approve = _acted(found, actions.arguments, "approve")
        if approve:
            reasons.append(f"the arguments carry {_kinds(approve)}: a guardrail asks a human's approval")
        if self.approve_egress and _EGRESS in call.tool.flow_labels:
            if labels is None:
                reasons.append(f"{call.tool.canonical_name} sends data out and its session's flow is unknown")
            elif _UNTRUSTED in labels:
                reasons.append(
                    f"{call.tool.canonical_name} sends data out after untrusted input in the same session"
                )
        if reasons:
            changes["obligations"] = call.obligations.joined(
                Obligations(require_approval=True, reasons=tuple(reasons))
            )
        return call.evolve(**changes)

    def _screened(
        self, call: Call, result: CallResult, actions: ToolGuardrails, record: dict[str, Any]
    ) -> tuple[CallResult, dict[str, Any]]:
        found = self._scan(result.output, actions)
        if not found:
            return result, record
        record = {**record, "results": _listed(found)}
        blocked = _acted(found, actions.results, "block")
        if blocked:
            status, err = error(
                "D-DATA-GUARDRAIL-BLOCKED",
                f"the result of '{call.tool.canonical_name}' carried {_kinds(blocked)}, which a guardrail "
                "withholds",
                findings=_listed(blocked),
            )
            return call.result(status, error=err), {**record, "action": "block"}
        redacted = _acted(found, actions.results, "redact")
        if redacted:
            hidden = self.scanner.redacted(result.output, {f.kind for f in redacted})
            return result.model_copy(update={"output": hidden}), {**record, "action": "redact"}
        return result, record

    def _scan(self, value: Any, actions: ToolGuardrails) -> tuple[GuardFinding, ...]:
        found = self.scanner.scan(value)
        return tuple(f for f in found if f.kind not in actions.muted) if actions.muted else found

    def _actions_of(self, tool: Tool) -> ToolGuardrails:
        cached = self._actions.get(id(tool))
        if cached is not None and cached[0] is tool:
            return cached[1]
        if len(self._actions) >= 4096:
            self._actions.clear()
        actions = actions_for(self.settings, tool)
        self._actions[id(tool)] = (tool, actions)
        return actions

    def _flow_key(self, call: Call) -> str | None:
        if self.flow is None:
            return None
        principal = call.principal
        return flow_key(principal.tenant or "-", principal.id, call.session_id, call.trace.trace_id)


def _acted(
    found: tuple[GuardFinding, ...], actions: dict[str, str] | Any, action: str
) -> tuple[GuardFinding, ...]:
    return tuple(f for f in found if actions.get(f.kind) == action)


def _listed(found: tuple[GuardFinding, ...]) -> list[dict[str, Any]]:
    return [f.to_dict() for f in found]


def _kinds(found: tuple[GuardFinding, ...]) -> str:
    return ", ".join(sorted({f.kind for f in found}))


def _raised(tool: Tool, record: dict[str, Any]) -> tuple[str, ...]:
    labels = list(tool.flow_labels)
    if any(f["kind"] == _INJECTION for f in record.get("results", ())) and _UNTRUSTED not in labels:
        labels.append(_UNTRUSTED)
    return tuple(labels)
