"""Rate limits and quotas: the rules (`limits:` in colonnade.yaml, a tool's manifest) and the limiter
that counts calls against them across replicas (`shared_state/counters.py`)."""

from colonnade.governance.limits.limiter import LimitDecision, Limiter, LimitUsage
from colonnade.governance.limits.rules import BoundLimit, LimitRule, compile_rules

__all__ = ["BoundLimit", "LimitDecision", "LimitRule", "LimitUsage", "Limiter", "compile_rules"]
