"""Rate limits: refuse a call over a limit it falls under, retryable, saying when to come back.

Placed after authorization and policy (the caller and the tool are known, and a call they refuse
never spends anyone's quota) and after the deadline, drain and overload checks (cheap, in-process
refusals first: this stage may ask Redis), but before the approval gate and everything after it:
a call over its limit parks no approval, claims no idempotency key and reaches no backend. A
keyed resend counts as a request too. The limits are the `limits:` rules of colonnade.yaml and the
tool's own `limits.rate`; a limit's concurrency slot is held until the call's answer.
"""

from __future__ import annotations

from dataclasses import replace

from colonnade.calls.call import Call
from colonnade.calls.call_errors import error
from colonnade.calls.envelope import CallResult
from colonnade.calls.manifest import ToolManifest
from colonnade.calls.pipeline import Next
from colonnade.governance.limits import LimitDecision, Limiter, LimitRule, LimitUsage

__all__ = ["RATE_LIMITED", "RateLimit"]

RATE_LIMITED = "R-CAP-RATE-LIMITED"


class RateLimit:
    def __init__(self, limiter: Limiter) -> None:
        self.limiter = limiter
        self._tool_rules: dict[str, tuple[LimitRule, ...]] = {}

    async def __call__(self, call: Call, next: Next) -> CallResult:
        tool = call.tool.canonical_name
        principal = call.principal
        bound = self.limiter.bind(principal, tool)
        for rule in self._rules_of(call.manifest):
            bound.extend(rule.bind(principal, tool))
        if not bound:
            return await next(call)
        decision = await self.limiter.admit(bound, lease_ms=int(call.remaining_s * 1000))
        if decision.refused is not None:
            return _with_usage(_refusal(call, decision, decision.refused), decision.usage)
        try:
            result = await next(call)
        finally:
            await decision.release()
        return _with_usage(result, decision.usage)

    def _rules_of(self, manifest: ToolManifest) -> tuple[LimitRule, ...]:
        """The tool's own rates as rules, built once per tool definition."""
        rates = manifest.limits.rate
        if not rates:
            return ()
        rules = self._tool_rules.get(manifest.digest)
        if rules is None:
            tool = manifest.tool_id
            rules = tuple(
                LimitRule.for_tool(
                    f"tool:{tool}" if len(rates) == 1 else f"tool:{tool}:{index}",
                    tool,
                    requests=rate.requests,
                    window_s=rate.window_s,
                    per=rate.per,
                )
                for index, rate in enumerate(rates, 1)
            )
            self._tool_rules[manifest.digest] = rules
        return rules


def _refusal(call: Call, decision: LimitDecision, refused: LimitUsage) -> CallResult:
    if refused.window_s is not None:
        what = f"{refused.limit} call(s) per {refused.window_s:g} s"
    else:
        what = f"{refused.limit} call(s) at once"
    share = "" if decision.shared else " (this replica's share)"
    status, err = error(
        RATE_LIMITED,
        f"limit '{refused.name}' allows {what}{share}; retry after {decision.retry_after_ms} ms",
        retry_after_ms=decision.retry_after_ms,
        limit_name=refused.name,
        kind=refused.kind,
        limit=refused.limit,
        window_s=refused.window_s,
        enforced="shared" if decision.shared else "local_share",
    )
    return call.result(status, error=err)


def _with_usage(result: CallResult, usage: tuple[LimitUsage, ...]) -> CallResult:
    return result.handing_over(replace(result.handover, limits=usage))
