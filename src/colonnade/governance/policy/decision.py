"""What the policies decided for one call: allowed or denied, why, and what later stages must do."""

from __future__ import annotations

from dataclasses import dataclass

from colonnade.governance.obligations import Obligations

__all__ = ["PolicyDecision"]


@dataclass(frozen=True, slots=True)
class PolicyDecision:
    """Each field holds what the policy rules of that name said (reasons, or output paths)."""

    version: str
    deny: tuple[str, ...] = ()
    require_approval: tuple[str, ...] = ()
    require_attestation: tuple[str, ...] = ()
    redact_output_fields: tuple[str, ...] = ()

    @property
    def allowed(self) -> bool:
        return not self.deny

    def obligations(self) -> Obligations:
        return Obligations(
            require_approval=bool(self.require_approval),
            require_attestation=bool(self.require_attestation),
            redact_output_fields=self.redact_output_fields,
            reasons=(*self.require_approval, *self.require_attestation),
            policy_version=self.version,
        )

    def to_audit(self) -> dict[str, object]:
        """What the call's audit record keeps: the version, and only the rules that fired."""
        fired = {rule: list(values) for rule, values in self._rules() if values}
        return {"policy_version": self.version, **fired}

    def _rules(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        return (
            ("deny", self.deny),
            ("require_approval", self.require_approval),
            ("require_attestation", self.require_attestation),
            ("redact_output_fields", self.redact_output_fields),
        )

    def to_dict(self) -> dict[str, object]:
        """The decision as `colonnade policy eval`, the status route and audit records show it."""
        return {
            "allowed": self.allowed,
            "policy_version": self.version,
            "deny": list(self.deny),
            "require_approval": list(self.require_approval),
            "require_attestation": list(self.require_attestation),
            "redact_output_fields": list(self.redact_output_fields),
        }
