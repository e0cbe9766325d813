"""The gateway's own Rego module: it gathers what every policy file said into one decision.

Policies write partial set rules in `package colonnade.policy`: `deny`, `require_approval` and
`require_attestation` hold reasons (strings), `redact_output_fields` holds dotted output paths.
A rule no file defines is simply empty here (a comprehension over an undefined reference is the
empty set), so a policy set may use any subset of them.
"""

from __future__ import annotations

__all__ = [
    "DECISION_ENTRYPOINT",
    "DECISION_MODULE",
    "DECISION_MODULE_NAME",
    "DECISION_QUERY",
    "OBLIGATION_RULES",
]

OBLIGATION_RULES = ("deny", "require_approval", "require_attestation", "redact_output_fields")
DECISION_MODULE_NAME = "colonnade/decision.rego"
DECISION_QUERY = "data.colonnade.decision.result"
DECISION_ENTRYPOINT = "colonnade/decision/result"
"""The same rule as a bundle entrypoint: queried without a query plan around it (a little faster)."""

DECISION_MODULE = """package colonnade.decision

import rego.v1

deny := {reason | some reason in data.colonnade.policy.deny}

require_approval := {reason | some reason in data.colonnade.policy.require_approval}

require_attestation := {reason | some reason in data.colonnade.policy.require_attestation}

redact_output_fields := {path | some path in data.colonnade.policy.redact_output_fields}

result := {
	"deny": deny,
	"require_approval": require_approval,
	"require_attestation": require_attestation,
	"redact_output_fields": redact_output_fields,
}
"""
