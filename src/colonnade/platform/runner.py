"""The builtin adapter's handler of a core tool: its `run`, with refusals as the call's error.

A governance service's refusal (`Forbidden`, `UnknownResource`, `InvalidRequest`) and a core tool's
own (`PlatformRefusal`), an invalid contract and a store's error become an outcome with their registry
code and message (retryable for `R-*` codes, e.g. a store that did not answer); the pipeline turns
it into the envelope, the audit record and the metrics like any tool's error.
"""

from __future__ import annotations

from typing import Any

from colonnade.adapters.outcome import AdapterOutcome, OutcomeKind
from colonnade.adapters.registry import Invocation
from colonnade.contracts.openapi.openapi_errors import OpenApiError
from colonnade.contracts.validate import ContractInvalid
from colonnade.governance.refusals import GovernanceRefusal
from colonnade.platform.core_tool import CoreTool
from colonnade.platform.refusal import PlatformRefusal
from colonnade.platform.resources import changed_uris
from colonnade.platform.services import PlatformServices
from colonnade.store.store_errors import StoreError

__all__ = ["CoreToolHandler"]


class CoreToolHandler:
    def __init__(self, core: CoreTool, services: PlatformServices) -> None:
        self.core = core
        self.services = services

    async def __call__(self, invocation: Invocation) -> AdapterOutcome:
        arguments = dict(invocation.arguments)
        try:
            body = await self.core.run(self.services, invocation.principal, arguments)
        except PlatformRefusal as refused:
            return _refused(refused.refusal_code, refused.message, refused.details)
        except GovernanceRefusal as refused:
            return _refused(refused.code, refused.message, None)
        except ContractInvalid as invalid:
            findings = [finding.to_dict() for finding in invalid.errors]
            return _refused(invalid.code, str(invalid), {"findings": findings})
        except (OpenApiError, StoreError) as failed:
            return _refused(failed.code, str(failed), None)
        changes = self.services.changes
        if self.core.writes and changes is not None:
            await changes.publish(changed_uris(self.core.name, (arguments, body)))
        return AdapterOutcome(OutcomeKind.SUCCESS, body=body)


def _refused(code: str, message: str, details: dict[str, Any] | None) -> AdapterOutcome:
    kind = OutcomeKind.RETRYABLE_ERROR if code.startswith("R-") else OutcomeKind.TERMINAL_ERROR
    return AdapterOutcome(kind, error_code=code, message=message, details=dict(details or {}))
