"""A two-phase API of one tenant over the fault backend: hold an item, then confirm or cancel the hold.

`{tenant}:holds:reserve` answers `success_prep` with a commit token; committing runs
`confirm_reservation`, discarding (or the deadline) runs `cancel_reservation`. The backend's ledger
records each (`reserve`, `confirm`, `cancel`) with its reservation id.
"""

from __future__ import annotations

from typing import Any

from colonnade.contracts.model import Contract

__all__ = ["hold_contract"]

_FAULT = {"type": "string", "x-in": "header", "x-name": "X-Fault"}


def _endpoint(path: str, operation: str, summary: str, **properties: Any) -> dict[str, Any]:
    return {
        "path": path,
        "methods": ["POST"],
        "operation_id": operation,
        "input_schema": {
            "type": "object",
            "properties": {**properties, "fault": _FAULT},
            "required": sorted(properties),
            "additionalProperties": False,
        },
        "llm": {
            "summary": summary,
            "intent": f"Use in two-phase governance tests to {summary.lower()}",
            "tool_name": operation,
            "side_effects": "write",
            "safe_for_agents": True,
            "requires_human_approval": False,
            "examples": [],
        },
    }


def hold_contract(tenant: str, base_url: str, *, window_ms: int = 60_000, owner: str = "team-a") -> Contract:
    text = {"type": "string"}
    reserve = _endpoint("/reservations", "reserve", "Hold an item", item_id=text)
    reserve["runtime"] = {
        "two_phase": {
            "commit_operation": "confirm_reservation",
            "compensate_operation": "cancel_reservation",
            "window_ms": window_ms,
        }
    }
    document: dict[str, Any] = {
        "name": "holds",
        "version": "1.0.0",
        "tenant": tenant,
        "display_name": f"{tenant} holds",
        "description": "Holds on items of the fault backend, for two-phase governance tests.",
        "status": "published",
        "owner": owner,
        "environment": "prod",
        "backend": {"base_url": base_url},
        "endpoints": [
            reserve,
            _endpoint(
                "/reservations/{reservation_id}/confirm",
                "confirm_reservation",
                "Confirm a hold",
                reservation_id=text,
            ),
            _endpoint(
                "/reservations/{reservation_id}/cancel",
                "cancel_reservation",
                "Cancel a hold",
                reservation_id=text,
            ),
        ],
    }
    return Contract.model_validate(document)
