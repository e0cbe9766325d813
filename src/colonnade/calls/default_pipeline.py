"""The order of the stages: the one place that decides it.

Observe wraps everything, so every call (refused ones included) gets its span, metrics and log
line. Audit comes next, so every call that observe sees also leaves an audit record, written
before the answer goes back. Resolution follows: nothing before it knows the tool. The policy
stage follows authorization and sets the obligations the approval gate, the attestation check
and output redaction read; redaction wraps everything that can produce an output. A stage that
wraps execution comes before what it wraps: output validation checks the final result of the
retried execution; two-phase turns a validated success into `success_prep`; idempotency stores
whatever comes back.
Stages whose dependency is not given are left out (unit tests build small pipelines); the
gateway always passes them all.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from colonnade.adapters.health_monitor import HealthMonitor
from colonnade.adapters.registry import AdapterRegistry
from colonnade.calls.approvals import ApprovalCoordinator
from colonnade.calls.manifest import Manifests
from colonnade.calls.pipeline import Pipeline, Stage
from colonnade.calls.stages.admission import Admission
from colonnade.calls.stages.approval import ApprovalGate
from colonnade.calls.stages.attestation import AttestationCheck
from colonnade.calls.stages.audit import Audit, SnapshotSink
from colonnade.calls.stages.authorize import Authorize
from colonnade.calls.stages.capacity import Capacity
from colonnade.calls.stages.circuit import CircuitBreaker
from colonnade.calls.stages.deadline import DeadlineCheck
from colonnade.calls.stages.drain import Drain
from colonnade.calls.stages.dry_run import DryRun
from colonnade.calls.stages.execute import Execute
from colonnade.calls.stages.guardrails import Guardrails
from colonnade.calls.stages.health import HealthGate
from colonnade.calls.stages.idempotency import Idempotency
from colonnade.calls.stages.network import NetworkPolicy
from colonnade.calls.stages.observe import Observe
from colonnade.calls.stages.policy import PolicyCheck
from colonnade.calls.stages.rate_limit import RateLimit
from colonnade.calls.stages.redact_output import RedactOutput
from colonnade.calls.stages.resolve import Resolve
from colonnade.calls.stages.retry import Retry
from colonnade.calls.stages.two_phase import TwoPhase
from colonnade.calls.stages.unkeyed_effects import UnkeyedEffects
from colonnade.calls.stages.validate_input import InputValidation
from colonnade.calls.stages.validate_output import OutputValidation
from colonnade.calls.two_phase import TwoPhaseCoordinator
from colonnade.catalog.builtins import BuiltinTools
from colonnade.catalog.catalog import Catalog
from colonnade.governance.attestation import AttestationVerifier
from colonnade.governance.audit import AuditLog
from colonnade.governance.authorization import Authorizer
from colonnade.governance.limits import Limiter
from colonnade.governance.policy.gate import PolicyGate
from colonnade.store.idempotency_repo import IdempotencyStore

__all__ = ["PipelineParts", "build_pipeline"]


@dataclass(frozen=True)
class PipelineParts:
    catalog: Catalog
    adapters: AdapterRegistry
    manifests: Manifests = field(default_factory=Manifests)
    builtins: BuiltinTools | None = None
    authorizer: Authorizer | None = None
    observe: Observe | None = None
    idempotency: IdempotencyStore | None = None
    idempotency_retention_s: float = 86_400.0
    two_phase: TwoPhaseCoordinator | None = None
    health: HealthMonitor | None = None
    audit: AuditLog | None = None
    approvals: ApprovalCoordinator | None = None
    policy: PolicyGate | None = None
    attestation: AttestationVerifier | None = None
    circuit: CircuitBreaker | None = None
    """The breaker to use (the gateway's, which shares openings across replicas); None: a new one."""
    limiter: Limiter | None = None
    snapshots: SnapshotSink | None = None
    guardrails: Guardrails | None = None


def build_pipeline(parts: PipelineParts) -> Pipeline:
    observe = parts.observe
    stages: list[Stage | None] = [
        observe,  # 10 outcome: span, metrics, one log line (wraps everything)
        # 11 audit record, durable before the answer (and a failed call's snapshot)
        Audit(parts.audit, parts.snapshots) if parts.audit is not None else None,
        Resolve(parts.catalog, parts.manifests, builtins=parts.builtins, authorizer=parts.authorizer),
        observe.in_flight() if observe is not None else None,  # calls in flight, per resolved tool
        Authorize(parts.authorizer),  # 2-4 persona, scopes, tenant, agent allow-list
        parts.guardrails,  # detectors on arguments (for the policy) and results; session flow labels
        *_policy_stages(parts),  # Rego policy -> obligations; output redaction; attestation
        DeadlineCheck(),  # a deadline already past is refused before anything is spent on the call
        Drain(),  # a stopping gateway ends calls still running at the drain limit, retryable
        Admission(),  # overload: refuse at once what would miss the tool's deadline or exceed the bound
        RateLimit(parts.limiter) if parts.limiter else None,  # rate limits, before anything is spent
        ApprovalGate(parts.approvals),  # 5 approval gate: parks the call, or spends its approval token
        InputValidation(),  # 6 validate input, every violation listed
        NetworkPolicy(),  # precondition: the backend is on the allow-lists
        HealthGate(parts.health) if parts.health else None,  # precondition: the backend is ready
        DryRun(),  # dry runs stop here: validated and authorized, not executed
        Idempotency(parts.idempotency, retention_s=parts.idempotency_retention_s)  # 7 idempotency
        if parts.idempotency
        else None,
        UnkeyedEffects(),  # an unkeyed call that may have acted is not answered "retry"
        Capacity(parts.limiter),  # concurrency_max per tool, across replicas
        TwoPhase(parts.two_phase) if parts.two_phase else None,  # 8 two-phase commit
        OutputValidation(),  # 9 validate output of the (retried) execution
        Retry(),  # 8 retries: retryable outcomes, safe tools, within the deadline
        parts.circuit
        or CircuitBreaker(),  # per backend: fail fast while it keeps failing (counts every attempt)
        Execute(parts.adapters),  # 8 execute within the deadline
    ]
    return Pipeline([stage for stage in stages if stage is not None])


def _policy_stages(parts: PipelineParts) -> list[Stage]:
    if parts.policy is None:
        return []
    return [PolicyCheck(parts.policy), RedactOutput(), AttestationCheck(parts.attestation)]
