"""The information-flow labels a session touched, kept where every replica serving it can read them.

A tool labelled `reads_private`, `ingests_untrusted` or `egress` adds its labels to its caller's
session once it answered; a result in which the guardrails found instructions aimed at the model
adds `ingests_untrusted` too. The policy input shows a call the labels its session touched before it
(`input.flow.labels`), so that a rule can ask for approval of "egress after untrusted input".

A flow is named by the caller and its MCP session (`Mcp-Session-Id`), or, where the protocol has no
session (the stateless MCP era, REST), by the call's trace id: a client that keeps one trace for a
task keeps one flow. The labels live in `SharedValues` (Redis when configured), one key per label
(a plain `set` of a fixed value), so that two replicas raising labels at once never lose one (a
read-modify-write of one record could); they expire `flow.session_s` after a label was raised.
With Redis away the labels cannot be read: the call's flow is then unknown (`input.flow.known`
false), and the built-in rule parks an egress call for approval rather than guess that its
session is clean; other calls go on, as every shared concern degrades without failing a call.
"""

from __future__ import annotations

import asyncio
import logging

from colonnade.config import FLOW_LABELS_ALL
from colonnade.shared_state import SharedStateUnavailable, SharedValues

__all__ = ["FlowLabels", "flow_key"]

logger = logging.getLogger(__name__)


def flow_key(tenant: str, principal_id: str, session_id: str | None, trace_id: str) -> str:
    scope = f"s:{session_id}" if session_id else f"t:{trace_id}"
    return f"flow:{tenant}:{principal_id}:{scope}"


class FlowLabels:
    def __init__(self, values: SharedValues, *, ttl_s: float) -> None:
        self.values = values
        self.ttl_s = ttl_s

    async def touched(self, key: str) -> list[str] | None:
        """The labels the flow touched; None when the shared state cannot say (Redis away)."""
        try:
            found = await asyncio.gather(*(self.values.get(f"{key}:{label}") for label in FLOW_LABELS_ALL))
        except SharedStateUnavailable as exc:
            logger.warning("flow labels of %s cannot be read: %s", key, exc)
            return None
        return [label for label, value in zip(FLOW_LABELS_ALL, found, strict=True) if value is not None]

    async def raise_labels(self, key: str, labels: tuple[str, ...]) -> None:
        """Raise the labels; with Redis away they are lost (logged), and reads say unknown meanwhile."""
        try:
            for label in labels:
                await self.values.set(f"{key}:{label}", b"1", ttl_s=self.ttl_s)
        except SharedStateUnavailable as exc:
            logger.warning("flow labels %s of %s not kept: %s", ",".join(labels), key, exc)
