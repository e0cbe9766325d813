"""What a decision asks of a call it allows: the authorize and policy stages set it, later stages honour it.

A decision is more than allow or deny: an allowed call may still need a human's approval, an
attestation signed by the calling agent, or fields hidden from its output. The authorize stage (a
persona that may act only through approval) and the policy stage put these on the call; the
approval gate, the attestation check and output redaction read them, so that no stage needs to
know how the policy was written.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["NO_OBLIGATIONS", "Obligations"]


@dataclass(frozen=True, slots=True)
class Obligations:
    """Obligations of the policy decision that allowed a call (none until the policy gate ran)."""

    require_approval: bool = False
    require_attestation: bool = False
    redact_output_fields: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()
    """Why, in the policies' words (shown to the caller and to approvers)."""
    policy_version: str | None = None
    """The digest of the policy bundle that decided (bound into approval tokens and audit)."""

    def joined(self, later: Obligations) -> Obligations:
        """What a call owes once a later decision adds its obligations (nothing asked before is dropped)."""
        return Obligations(
            require_approval=self.require_approval or later.require_approval,
            require_attestation=self.require_attestation or later.require_attestation,
            redact_output_fields=tuple(
                dict.fromkeys((*self.redact_output_fields, *later.redact_output_fields))
            ),
            reasons=tuple(dict.fromkeys((*self.reasons, *later.reasons))),
            policy_version=later.policy_version or self.policy_version,
        )


NO_OBLIGATIONS = Obligations()
