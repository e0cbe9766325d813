"""The contracts page's routes: the list, and the publish, deprecate and undeploy forms.

Each is one call of a platform tool through the pipeline as the visitor (`call_outcome` shows its
envelope); the page parses the pasted contract (YAML or JSON) before the call, so a document that
does not parse is a `400` that says where, and never a call.
"""

from __future__ import annotations

from typing import Any

import yaml
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from colonnade.calls.envelope import CallRequest, CallResult
from colonnade.calls.service import CallService
from colonnade.surfaces.edge import principal_of_scope
from colonnade.surfaces.pages.call_outcome import call_outcome
from colonnade.surfaces.pages.contracts_page import contracts_page
from colonnade.surfaces.pages.forms import csrf_refusal, form_fields, visitor_of
from colonnade.surfaces.pages.html import Html, tag
from colonnade.surfaces.pages.layout import CONTRACTS_PATH, page_response

__all__ = ["ContractsView"]

_PLATFORM = "colonnade:platform:"
_CONTRACT_MAX = 512_000


class ContractsView:
    def __init__(self, calls: CallService, served: bool) -> None:
        """`served`: the gateway serves its platform tools (`platform.tools`); else the page says so."""
        self.calls = calls
        self.served = served

    def routes(self) -> list[BaseRoute]:
        return [
            Route(CONTRACTS_PATH, self.page, methods=["GET"]),
            Route(CONTRACTS_PATH + "/publish", self.publish, methods=["POST"]),
            Route(CONTRACTS_PATH + "/deprecate", self.deprecate, methods=["POST"]),
            Route(CONTRACTS_PATH + "/undeploy", self.undeploy, methods=["POST"]),
        ]

    async def page(self, request: Request) -> Response:
        return await self._page(request)

    async def publish(self, request: Request) -> Response:
        fields = await form_fields(request)
        refused = csrf_refusal(request, fields)
        if refused is not None:
            return refused
        text = fields.get("contract", "")[:_CONTRACT_MAX]
        document = _document(text)
        if isinstance(document, str):
            return await self._page(request, tag("p", document, class_="error", id="error"), text, status=400)
        return await self._after(request, "create_api", {"contract": document}, text)

    async def deprecate(self, request: Request) -> Response:
        fields = await form_fields(request)
        refused = csrf_refusal(request, fields)
        if refused is not None:
            return refused
        arguments = {"api": fields.get("api", ""), "version": fields.get("version", "")}
        return await self._after(request, "deprecate_api", arguments)

    async def undeploy(self, request: Request) -> Response:
        fields = await form_fields(request)
        refused = csrf_refusal(request, fields)
        if refused is not None:
            return refused
        return await self._after(request, "undeploy_api", {"api": fields.get("api", "")})

    async def _after(
        self, request: Request, tool: str, arguments: dict[str, Any], text: str = ""
    ) -> Response:
        result = await self._call(request, tool, arguments)
        kept = text if result.error is not None else ""  # a refused contract stays in the form to fix
        return await self._page(request, call_outcome(result), kept)

    async def _call(self, request: Request, tool: str, arguments: dict[str, Any]) -> CallResult:
        call = CallRequest(tool_id=_PLATFORM + tool, input=arguments)
        return await self.calls.call(call, principal_of_scope(request.scope))

    async def _page(
        self, request: Request, notice: Html | None = None, text: str = "", status: int = 200
    ) -> Response:
        visitor = visitor_of(request)
        if not self.served:
            problem = "This gateway does not serve its platform tools (platform.tools), which this page runs."
            return page_response(contracts_page(None, visitor=visitor, problem=problem), 404)
        listed = await self._call(request, "list_apis", {})
        if listed.error is not None:
            problem = f"The APIs could not be listed: {listed.error.message} ({listed.error.code})."
            page = contracts_page(None, visitor=visitor, notice=notice, problem=problem, contract_text=text)
        else:
            apis = list((listed.output or {}).get("apis", []))
            page = contracts_page(apis, visitor=visitor, notice=notice, contract_text=text)
        return page_response(page, status)


def _document(text: str) -> dict[str, Any] | str:
    """The pasted contract as a mapping, or what is wrong with it."""
    if not text.strip():
        return "Paste a contract (UAC, YAML or JSON) to publish."
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        at = f" at line {where.line + 1}, column {where.column + 1}" if where is not None else ""
        return f"The contract does not parse as YAML{at}: {getattr(exc, 'problem', None) or exc}."
    if not isinstance(value, dict):
        return f"A contract is one mapping (name, version, endpoints, ...), not a {type(value).__name__}."
    return value
