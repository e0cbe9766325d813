"""Resolve: the first stage after observe. The requested name, version and digest become one tool.

A name resolves among the gateway's built-in tools first, then the catalog (canonical or wire
name), then as a bare `llm.tool_name` that exactly one tool the caller may see bears
(`governance/tool_lookup.py`; several: `I-REQ-AMBIGUOUS-TOOL` with the candidates). A version
range picks the highest published version within one major version; a digest the caller pinned
must match. An unknown name is answered with the closest names the caller may see ("did you
mean"), never with names of tools it may not see; and a tool the caller may not see is unknown
here too, so a version or digest refusal never confirms that another tenant serves it.
A deprecated version (reached by a pin) answers with a deprecation warning until its sunset, and
from then on is refused with C-CONTRACT-SUNSET naming its successor.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from colonnade.calls.call import Call
from colonnade.calls.call_errors import error
from colonnade.calls.envelope import CallResult
from colonnade.calls.manifest import Manifests
from colonnade.calls.pipeline import Next
from colonnade.calls.versions import Refusal, resolve_tool, unknown_tool
from colonnade.catalog.builtins import BuiltinTools
from colonnade.catalog.catalog import Catalog
from colonnade.catalog.tool import Tool
from colonnade.contracts.model import Deprecation
from colonnade.governance.authorization import AllowAll, Authorizer, permits
from colonnade.governance.reach import reach_hint
from colonnade.governance.tool_lookup import AMBIGUOUS_TOOL, AmbiguousName, find_tool, near_names

__all__ = ["SUNSET", "Resolve"]

SUNSET = "C-CONTRACT-SUNSET"


class Resolve:
    def __init__(
        self,
        catalog: Catalog,
        manifests: Manifests | None = None,
        *,
        builtins: BuiltinTools | None = None,
        authorizer: Authorizer | None = None,
    ) -> None:
        self.catalog = catalog
        self.manifests = manifests if manifests is not None else Manifests()
        self.builtins = builtins if builtins is not None else BuiltinTools()
        self.authorizer: Authorizer = authorizer if authorizer is not None else AllowAll()

    async def __call__(self, call: Call, next: Next) -> CallResult:
        request = call.request
        builtin = self.builtins.get(request.tool_id)
        if builtin is not None and request.tool_version not in (None, builtin.version):
            builtin = None  # a pinned version the gateway's tool does not have: refused below as unknown
        resolved: Tool | Refusal = builtin or self._from_catalog(call)
        if isinstance(resolved, Refusal):
            shown = resolved.error.code in ("I-REQ-UNKNOWN-TOOL", AMBIGUOUS_TOOL)  # name visible tools only
            if not shown and not self._sees(call, request.tool_id):
                return self._refused(call, unknown_tool(request.tool_id))
            return self._refused(call, resolved)
        expected = (request.provenance or {}).get("digest")
        if expected is not None and builtin is None and not self._sees(call, resolved.canonical_name):
            return self._refused(call, unknown_tool(request.tool_id))
        if expected is not None and expected != resolved.digest:
            status, err = error(
                "C-CONTRACT-DIGEST-MISMATCH",
                f"'{resolved.canonical_name}' {resolved.version} has digest {resolved.digest},"
                f" not {expected}",
                digest=resolved.digest,
            )
            return call.result(status, error=err)
        if resolved.deprecation is not None:
            return await self._deprecated(call, resolved, resolved.deprecation, next)
        result = await next(call.resolve(resolved, self.manifests.for_tool(resolved)))
        if result.handover.tool is None:  # not built by this call (a stored replay): say what it resolved to
            result = result.handing_over(replace(result.handover, tool=resolved))
        return result

    async def _deprecated(self, call: Call, tool: Tool, notice: Deprecation, next: Next) -> CallResult:
        """A deprecated version answers with a warning until its sunset, then refuses naming its successor."""
        label = f"'{tool.canonical_name}' {tool.version}"
        if notice.sunset_at is not None and datetime.now(UTC) >= _aware(notice.sunset_at):
            successor = notice.successor
            moved = f"; move to version {successor}" if successor else "; no successor was named"
            status, err = error(
                SUNSET,
                f"{label} reached its sunset at {notice.sunset_at.isoformat()}{moved}",
                tool=tool.canonical_name,
                version=tool.version,
                sunset_at=notice.sunset_at.isoformat(),
                successor=successor,
                successor_has_tool=successor is not None
                and successor in self.catalog.tool_versions(tool.canonical_name),
            )
            return call.result(status, error=err)
        result = await next(call.resolve(tool, self.manifests.for_tool(tool)))
        if result.handover.tool is None:
            result = result.handing_over(replace(result.handover, tool=tool))
        return result.model_copy(update={"warnings": [*result.warnings, notice.notice(label)]})

    def _from_catalog(self, call: Call) -> Tool | Refusal:
        """The tool (at the asked version) of a canonical, wire or unambiguous bare name."""
        request = call.request
        found = find_tool(self.catalog, request.tool_id, self.authorizer, call.principal)
        if isinstance(found, AmbiguousName):
            return Refusal(*error(AMBIGUOUS_TOOL, found.message, **found.details))
        name = found.canonical_name if found is not None else request.tool_id
        return resolve_tool(self.catalog, name, request.tool_version)

    def _refused(self, call: Call, refusal: Refusal) -> CallResult:
        err = refusal.error
        if err.code == "I-REQ-UNKNOWN-TOOL":
            hint = reach_hint(call.principal)  # said alike for hidden and unknown names
            if hint:
                err = err.model_copy(update={"message": f"{err.message}{hint}"})
            near = self.near(call, call.request.tool_id)
            if near:
                err = err.model_copy(
                    update={
                        "message": f"{err.message}; did you mean {' or '.join(repr(n) for n in near)}?",
                        "details": {**err.details, "did_you_mean": near},
                    }
                )
        return call.result(refusal.status, error=err)

    def _sees(self, call: Call, name: str) -> bool:
        """Whether the caller may see the tool this name (canonical or wire, any version) belongs to."""
        versions = self.catalog.tool_versions(name)
        canonical = next(iter(versions.values())).canonical_name if versions else name
        return permits(self.authorizer.visible(call.principal), canonical)

    def near(self, call: Call, name: str) -> list[str]:
        """Close names of tools this caller may call."""
        return near_names(self.catalog, name, self.authorizer, call.principal)


def _aware(moment: datetime) -> datetime:
    """A sunset written without a zone is read as UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
