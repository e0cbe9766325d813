""" "Try this tool": the tool page's form runs one call as the logged-in visitor, through the pipeline.

The call is what `POST /v1/calls` makes (authorization, policy, approvals, validation, audit): a
tool the visitor may not call is refused, an approval-gated one parks and the page links to its
approval. A tool that changes data is tried as a dry run unless the visitor unticks it, and each
form carries its own idempotency key, so sending the same form twice (a reload) runs the call once.
"""

from __future__ import annotations

import json
import secrets
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from colonnade.calls.envelope import CallConstraints, CallRequest
from colonnade.calls.manifest import Manifests
from colonnade.calls.service import CallService
from colonnade.catalog.catalog import Catalog
from colonnade.catalog.tool import Tool
from colonnade.contracts.model import SideEffects
from colonnade.governance.authorization import Authorizer, permits
from colonnade.governance.tool_lookup import find_tool
from colonnade.surfaces.edge import principal_of_scope
from colonnade.surfaces.pages.call_outcome import call_outcome
from colonnade.surfaces.pages.forms import csrf_refusal, form_fields, visitor_of
from colonnade.surfaces.pages.html import Html, join, tag
from colonnade.surfaces.pages.layout import Visitor, csrf_input, page_response
from colonnade.surfaces.pages.tool_page import tool_page

__all__ = ["TRY_PATH", "TryTool", "try_form", "try_part"]

TRY_PATH = "/ui/try"
_ARGUMENTS_MAX = 64_000


def try_url(tool: Tool) -> str:
    return f"{TRY_PATH}/{tool.canonical_name}"


def try_form(tool: Tool, visitor: Visitor | None, arguments: str | None = None) -> Html | None:
    """The form, for a visitor in a logged-in page session (None otherwise)."""
    if visitor is None or visitor.csrf_token is None:
        return None
    if arguments is None:
        examples = tool.llm.examples if tool.llm is not None else []
        arguments = json.dumps(examples[0].input if examples else {}, indent=2, ensure_ascii=False)
    changes = tool.side_effects in (SideEffects.WRITE, SideEffects.DESTRUCTIVE)
    return tag(
        "form",
        csrf_input(visitor),
        tag("input", type="hidden", name="idempotency_key", value=f"page-{secrets.token_urlsafe(12)}"),
        tag("label", "Arguments (JSON)", tag("textarea", arguments, name="arguments", rows=8, cols=80)),
        tag(
            "label",
            tag("input", type="checkbox", name="dry_run", value="1", checked=changes),
            " dry run (validate and decide, do not reach the backend)",
        ),
        tag("button", "Run as me", type="submit"),
        method="post",
        action=try_url(tool),
        class_="try",
        id="try",
    )


def try_part(tool: Tool, visitor: Visitor | None) -> Html | None:
    """The tool page's "Try this tool" section before any call (None without a page session)."""
    form = try_form(tool, visitor)
    return join(tag("h2", "Try this tool", id="tried"), form) if form is not None else None


class TryTool:
    def __init__(
        self, catalog: Catalog, calls: CallService, authorizer: Authorizer, manifests: Manifests
    ) -> None:
        self.catalog = catalog
        self.calls = calls
        self.authorizer = authorizer
        self.manifests = manifests

    def route_path(self) -> str:
        return TRY_PATH + "/{name:path}"

    async def run(self, request: Request) -> Response:
        fields = await form_fields(request)
        refused_form = csrf_refusal(request, fields)
        if refused_form is not None:
            return refused_form
        principal = principal_of_scope(request.scope)
        found = find_tool(self.catalog, request.path_params["name"], self.authorizer, principal)
        allowed = self.authorizer.visible(principal)
        if not isinstance(found, Tool) or not permits(allowed, found.canonical_name):
            return Response("No such tool", status_code=404, media_type="text/plain")
        text = fields.get("arguments", "{}")[:_ARGUMENTS_MAX]
        arguments = _arguments(text)
        visitor = visitor_of(request)
        if isinstance(arguments, str):
            outcome = tag("p", arguments, class_="error", id="try-error")
            return await self._page(found, visitor, outcome, text, 400)
        call = CallRequest(
            tool_id=found.canonical_name,
            input=arguments,
            dry_run=bool(fields.get("dry_run")),
            constraints=CallConstraints(idempotency_key=fields.get("idempotency_key") or None),
        )
        result = await self.calls.call(call, principal)
        return await self._page(found, visitor, call_outcome(result), text)

    async def _page(
        self, tool: Tool, visitor: Visitor | None, outcome: Html, text: str, status: int = 200
    ) -> Response:
        manifest = self.manifests.for_tool(tool)
        trial = join(tag("h2", "Try this tool", id="tried"), outcome, try_form(tool, visitor, text))
        page = await run_in_threadpool(tool_page, self.catalog, tool, manifest, visitor, trial)
        return page_response(page, status)


def _arguments(text: str) -> dict[str, Any] | str:
    """The form's arguments as an object, or what is wrong with them."""
    try:
        value = json.loads(text or "{}")
    except json.JSONDecodeError as exc:
        return f"The arguments are not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}."
    if not isinstance(value, dict):
        return f"The arguments are one JSON object ({{...}}), not a {type(value).__name__}."
    return value
