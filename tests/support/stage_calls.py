"""Calls of the fault contract's tools, built without a service, for unit tests of single stages."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from colonnade.calls.call import Call
from colonnade.calls.call_errors import error
from colonnade.calls.envelope import CallConstraints, CallRequest, CallResult, CallStatus
from colonnade.calls.manifest import ManifestOverride, derive_manifest
from colonnade.catalog.catalog import Catalog
from colonnade.contracts.model import Contract
from tests.support.fault_contract import fault_contract

__all__ = ["BACKEND", "answer", "failure", "stage_call"]

BACKEND = "127.0.0.1:9"  # the fault contract's backend in these calls; never contacted
_CATALOG = Catalog()
_CATALOG.publish(Contract.model_validate(fault_contract(f"http://{BACKEND}")))


def stage_call(
    tool: str = "get_item", override: ManifestOverride | None = None, **constraints: Any
) -> Call:
    """A started call of `chaos:faults:<tool>` (its manifest derived, `override` applied)."""
    found = _CATALOG.get(f"chaos:faults:{tool}")
    assert found is not None
    request = CallRequest(
        tool_id=found.canonical_name, input={"item_id": "I-1"}, constraints=CallConstraints(**constraints)
    )
    return Call.start(request, found, derive_manifest(found, override))


def answer(status: CallStatus = CallStatus.SUCCESS) -> Callable[[Call], Awaitable[CallResult]]:
    """A last stage that ends every call with `status` (no error)."""

    async def last(call: Call) -> CallResult:
        return call.result(status, output={"ok": True})

    return last


def failure(code: str, **details: Any) -> Callable[[Call], Awaitable[CallResult]]:
    """A last stage that ends every call with the registered error `code`."""

    async def last(call: Call) -> CallResult:
        status, err = error(code, **details)
        return call.result(status, error=err)

    return last
