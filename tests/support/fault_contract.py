"""The fault backend's UAC contract: reads, idempotent writes, effects, payments, a two-phase reservation.

Effects are declared to be deduplicated by the backend (`runtime.deduplicates_idempotency_key`),
as the backend does; payments are not, so the gateway alone must keep them from running twice.
"""

from __future__ import annotations

from typing import Any

__all__ = ["fault_contract"]

_FAULT = {"type": "string", "x-in": "header", "x-name": "X-Fault", "description": "fault to inject"}
_ATTEMPT = {"type": "string", "x-in": "header", "x-name": "X-Attempt-Key", "description": "counts attempts"}


def _llm(tool: str, effects: str, summary: str) -> dict[str, Any]:
    return {
        "summary": summary,
        "intent": f"Use in fault-injection tests to {summary.lower()}",
        "tool_name": tool,
        "side_effects": effects,
        "safe_for_agents": True,
        "requires_human_approval": False,
        "examples": [],
    }


def _schema(required: list[str], **properties: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {**properties, "fault": _FAULT, "attempt_key": _ATTEMPT},
        "required": required,
        "additionalProperties": False,
    }


def fault_contract(base_url: str, *, window_ms: int = 60_000, version: str = "1.0.0") -> dict[str, Any]:
    item = {
        "type": "object",
        "properties": {"id": {"type": "string"}, "value": {"type": "string"}},
        "required": ["id", "value"],
    }
    reservation = {
        "type": "object",
        "properties": {"reservation_id": {"type": "string"}, "state": {"type": "string"}},
        "required": ["reservation_id", "state"],
    }
    rid = {"type": "string"}
    return {
        "name": "faults",
        "version": version,
        "tenant": "chaos",
        "display_name": "Fault backend",
        "description": "A backend that fails on request, for tests.",
        "status": "published",
        "backend": {"base_url": base_url, "health_path": "/healthz"},
        "endpoints": [
            {
                "path": "/items/{item_id}",
                "methods": ["GET"],
                "operation_id": "get_item",
                "input_schema": _schema(["item_id"], item_id={"type": "string"}),
                "output_schema": item,
                "llm": _llm("get_item", "read", "Read one item"),
            },
            {
                "path": "/items/{item_id}",
                "methods": ["PUT"],
                "operation_id": "put_item",
                "input_schema": _schema(
                    ["item_id", "value"], item_id={"type": "string"}, value={"type": "string"}
                ),
                "output_schema": item,
                "llm": _llm("put_item", "write", "Replace one item"),
            },
            {
                "path": "/effects",
                "methods": ["POST"],
                "operation_id": "create_effect",
                "input_schema": _schema(["note"], note={"type": "string"}),
                "llm": _llm("create_effect", "write", "Create one effect"),
                "runtime": {"deduplicates_idempotency_key": True},
            },
            {
                "path": "/payments",
                "methods": ["POST"],
                "operation_id": "create_payment",
                "input_schema": _schema(["note"], note={"type": "string"}),
                "llm": _llm("create_payment", "write", "Make one payment"),
            },
            {
                "path": "/reservations",
                "methods": ["POST"],
                "operation_id": "reserve",
                "input_schema": _schema(["item_id"], item_id={"type": "string"}),
                "output_schema": reservation,
                "llm": _llm("reserve", "write", "Hold an item"),
                "runtime": {
                    "two_phase": {
                        "commit_operation": "confirm_reservation",
                        "compensate_operation": "cancel_reservation",
                        "window_ms": window_ms,
                    }
                },
            },
            {
                "path": "/reservations/{reservation_id}/confirm",
                "methods": ["POST"],
                "operation_id": "confirm_reservation",
                "input_schema": _schema(["reservation_id"], reservation_id=rid),
                "output_schema": reservation,
                "llm": _llm("confirm_reservation", "write", "Confirm a hold"),
            },
            {
                "path": "/reservations/{reservation_id}/cancel",
                "methods": ["POST"],
                "operation_id": "cancel_reservation",
                "input_schema": _schema(["reservation_id"], reservation_id=rid),
                "output_schema": reservation,
                "llm": _llm("cancel_reservation", "write", "Cancel a hold"),
            },
        ],
    }
