"""OpenAPI 3.0/3.1 -> a draft UAC contract, with a report of what needs a human.

One endpoint per operation (path + one method). Operation ids come from `operationId`,
made into identifiers (`repos/list-for-user` -> `repos_list_for_user`) or built from the
method and path when absent, and kept unique. Each operation's `x-llm` extension becomes its
`llm` block; without one, a draft block is seeded and the operation is listed for review.
An operation that cannot be mapped is skipped and listed with the reason, never dropped
silently. Document-level problems (not OpenAPI 3.x, a `$ref` that does not resolve, no
absolute server URL) raise `OpenApiError` with a pointer.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from colonnade.contracts.model import HTTP_METHODS
from colonnade.contracts.openapi.llm import merge_llm, seed_llm, seed_reason
from colonnade.contracts.openapi.metadata import contract_header
from colonnade.contracts.openapi.naming import identifier, snake_case, unique
from colonnade.contracts.openapi.openapi_errors import OpenApiError
from colonnade.contracts.openapi.operations import EndpointDraft, Unmappable, draft_endpoint
from colonnade.contracts.openapi.refs import RefResolver, join_pointer
from colonnade.contracts.openapi.report import (
    ImportedOperation,
    ImportNote,
    ImportResult,
    ReviewItem,
    SkippedOperation,
)
from colonnade.contracts.openapi.schema_conversion import SchemaConverter
from colonnade.contracts.openapi.security import OperationSecurity

__all__ = ["LLM_EXTENSION", "MCP_EXTENSION", "import_openapi"]

LLM_EXTENSION = "x-llm"
MCP_EXTENSION = "x-colonnade-mcp"
TOOL_NAME_LIMIT = 64
_OPENAPI_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
_SUPPORTED_VERSION = re.compile(r"^3\.[01](\.\d+)?(-[0-9A-Za-z.-]+)?$")
_CONVERT_HINT = (
    "convert it to OpenAPI 3 first, e.g. `npx swagger2openapi spec.yaml -o spec3.yaml` "
    "or Swagger Editor's Edit > Convert to OpenAPI 3"
)


@dataclass
class _Found:
    """One operation of the document, where it is, and the operation id it was given."""

    path: str
    method: str
    operation: Mapping[str, Any]
    path_item: Mapping[str, Any]
    item_pointer: str
    pointer: str
    operation_id: str = ""

    @property
    def given_id(self) -> str | None:
        value = self.operation.get("operationId") if isinstance(self.operation, Mapping) else None
        return str(value) if value is not None else None


@dataclass(frozen=True)
class _Mapped:
    """An operation that maps onto an endpoint, with its draft."""

    found: _Found
    draft: EndpointDraft

    @property
    def operation(self) -> Mapping[str, Any]:
        return self.found.operation

    @property
    def operation_id(self) -> str:
        return self.found.operation_id

    @property
    def method(self) -> str:
        return self.found.method


def _plain(value: Any) -> Any:
    """JSON-compatible data: YAML dates become ISO strings and mapping keys become strings."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


def _check_version(doc: object) -> Mapping[str, Any]:
    if not isinstance(doc, Mapping):
        raise OpenApiError(
            f"an OpenAPI document is a mapping, this is a {type(doc).__name__}",
            pointer="",
            hint="pass the OpenAPI YAML or JSON file of the API",
        )
    if "openapi" not in doc:
        if "swagger" in doc:
            raise OpenApiError(
                f"this is a Swagger {doc['swagger']} document; only OpenAPI 3.0 and 3.1 can be imported",
                pointer="/swagger",
                hint=_CONVERT_HINT,
            )
        raise OpenApiError(
            "not an OpenAPI document: the `openapi` field is missing",
            pointer="",
            hint="an OpenAPI 3 document starts with e.g. `openapi: 3.1.0`",
        )
    version = str(doc["openapi"])
    if not _SUPPORTED_VERSION.match(version):
        raise OpenApiError(
            f"OpenAPI version {version!r} is not supported; only 3.0.x and 3.1.x can be imported",
            pointer="/openapi",
            hint="import an OpenAPI 3.0 or 3.1 document",
        )
    if not isinstance(doc.get("paths", {}), Mapping):
        raise OpenApiError("`paths` must be a mapping of path -> path item", pointer="/paths")
    return doc


def _operations(doc: Mapping[str, Any], resolver: RefResolver) -> Iterator[_Found]:
    for path, raw_item in doc.get("paths", {}).items():
        item_pointer = join_pointer("/paths", path)
        item, _ = resolver.follow(raw_item, item_pointer)
        if not isinstance(item, Mapping):
            raise OpenApiError(f"path item of {path} is not a mapping", pointer=item_pointer)
        for key, operation in item.items():
            if key in _OPENAPI_METHODS:
                pointer = join_pointer(item_pointer, key)
                yield _Found(str(path), key.upper(), operation, item, item_pointer, pointer)


def _synthesised_id(method: str, path: str) -> str:
    """`GET /pets/{petId}/toys` -> `get_pets_by_petId_toys`."""
    words = [method.lower()]
    for segment in path.strip("/").split("/"):
        if segment.startswith("{") and segment.endswith("}"):
            words.append(f"by_{segment[1:-1]}")
        elif segment:
            words.append(segment)
    return identifier("_".join(words)) if len(words) > 1 else f"{method.lower()}_root"


def _assign_operation_ids(found: list[_Found]) -> None:
    """Given ids first (so a synthesised one never takes a given name), then the rest."""
    taken: set[str] = set()
    for item in found:
        given = identifier(item.given_id) if item.given_id else ""
        if given:
            item.operation_id = unique(given, taken)
            taken.add(item.operation_id)
    for item in found:
        if not item.operation_id:
            item.operation_id = unique(_synthesised_id(item.method, item.path), taken)
            taken.add(item.operation_id)


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _llm_blocks(mapped: list[_Mapped]) -> tuple[dict[str, dict[str, Any]], list[ReviewItem]]:
    """Each operation's `llm` block, keyed by operation id; tool names kept unique.

    Blocks given in `x-llm` claim their tool names first. `x-llm: null` (written by the
    exporter for an endpoint without a block) means no block, deliberately: none is seeded.
    """
    blocks: dict[str, dict[str, Any]] = {}
    review: list[ReviewItem] = []
    taken: set[str] = set()
    given = [m for m in mapped if m.operation.get(LLM_EXTENSION) is not None]
    seeded = [m for m in mapped if LLM_EXTENSION not in m.operation]
    for item in [*given, *seeded]:
        summary, description = _text(item.operation.get("summary")), _text(item.operation.get("description"))
        tool = unique(snake_case(item.operation_id)[:TOOL_NAME_LIMIT], taken, max_length=TOOL_NAME_LIMIT)
        seed = seed_llm(
            method=item.method, path=item.draft.path, summary=summary, description=description, tool_name=tool
        )
        if LLM_EXTENSION in item.operation:
            block, reason = merge_llm(item.operation[LLM_EXTENSION], seed)
        else:
            block, reason = seed, seed_reason(item.method, summary, description)
        if block["tool_name"] in taken:
            block["tool_name"] = tool
            reason = "; ".join(filter(None, [reason, "x-llm tool_name already used by another operation"]))
        taken.add(block["tool_name"])
        blocks[item.operation_id] = block
        if reason:
            review.append(ReviewItem(item.method, item.draft.path, item.operation_id, reason))
    order = {m.operation_id: i for i, m in enumerate(mapped)}
    return blocks, sorted(review, key=lambda r: order[r.operation_id])


def _endpoint(item: _Mapped, llm: dict[str, Any] | None) -> dict[str, Any]:
    endpoint: dict[str, Any] = {
        "path": item.draft.path,
        "methods": [item.method],
    }
    if item.draft.backend_url is not None:
        endpoint["backend_url"] = item.draft.backend_url
    endpoint["operation_id"] = item.operation_id
    description = _text(item.operation.get("description")).strip()
    if description:
        endpoint["description"] = description
    tags = item.operation.get("tags")
    if isinstance(tags, list) and tags:
        endpoint["tags"] = [str(t) for t in tags]
    if item.draft.body_media_type is not None:
        endpoint["body_media_type"] = item.draft.body_media_type
    endpoint["input_schema"] = item.draft.input_schema
    if item.draft.output_schema is not None:
        endpoint["output_schema"] = item.draft.output_schema
    if item.operation.get(MCP_EXTENSION) is False:
        endpoint["mcp"] = False
    if llm is not None:
        endpoint["llm"] = llm
    return endpoint


def _skip_reason(item: _Found) -> str | None:
    if item.method not in HTTP_METHODS:
        return f"method {item.method} cannot be a contract endpoint (supported: {', '.join(HTTP_METHODS)})"
    if not isinstance(item.operation, Mapping):
        return "the operation is not a mapping"
    if not item.path.startswith("/"):
        return "the path does not start with '/'"
    return None


def import_openapi(
    spec: Mapping[str, Any],
    *,
    tenant: str,
    api: str | None = None,
    base_url: str | None = None,
    source: str = "<openapi>",
) -> ImportResult:
    """Import an OpenAPI 3.0/3.1 document (already parsed) as a draft contract of `tenant`.

    `api` names the contract (default: `x-colonnade.name`, else `info.title` in kebab-case);
    `base_url` overrides the first server's URL; `source` names the document in notes.
    Raises `OpenApiError` when the document as a whole cannot be imported.
    """
    doc = _check_version(_plain(spec))
    resolver = RefResolver(doc)
    converter = SchemaConverter(resolver)
    notes: list[ImportNote] = []
    found = list(_operations(doc, resolver))
    header, credentials = contract_header(
        doc,
        resolver,
        tenant=tenant,
        api=api,
        base_url=base_url,
        notes=notes,
        operations=[_security_of(item, resolver) for item in found if isinstance(item.operation, Mapping)],
    )
    notes.extend(credentials.notes)
    _assign_operation_ids(found)
    skipped: list[SkippedOperation] = []
    mapped: list[_Mapped] = []
    for item in found:
        reason = _skip_reason(item)
        if reason is None:
            try:
                draft = draft_endpoint(
                    converter,
                    path=item.path,
                    path_item=item.path_item,
                    operation=item.operation,
                    item_pointer=item.item_pointer,
                    op_pointer=item.pointer,
                    credentials=credentials,
                )
            except Unmappable as exc:
                reason = str(exc)
        if reason is not None:
            skipped.append(SkippedOperation(item.method, item.path, item.given_id, reason, item.pointer))
            continue
        mapped.append(_Mapped(item, draft))
        notes.extend(ImportNote(f"{item.method} {item.path}", n) for n in draft.notes)
    if "webhooks" in doc:
        notes.append(ImportNote("webhooks", "webhooks describe calls the API makes, not tools; not imported"))
    if not found:
        notes.append(ImportNote(source, "the document has no operations; the contract has no endpoints"))
    blocks, review = _llm_blocks(mapped)
    endpoints = [_endpoint(item, blocks.get(item.operation_id)) for item in mapped]
    imported = [
        ImportedOperation(
            m.method, e["path"], m.operation_id, e.get("llm", {}).get("tool_name", m.operation_id)
        )
        for m, e in zip(mapped, endpoints, strict=True)
    ]
    checklist = [*(str(h) for h in credentials.needs_human), *(str(r) for r in review)]
    if checklist:
        header["needs_review"] = checklist
    return ImportResult(
        {**header, "endpoints": endpoints}, imported, review, skipped, notes, credentials.needs_human
    )


def _security_of(item: _Found, resolver: RefResolver) -> OperationSecurity:
    """The operation's `security` and its parameters (path-level ones too, references followed)."""
    parameters: list[Mapping[str, Any]] = []
    for owner, pointer in ((item.path_item, item.item_pointer), (item.operation, item.pointer)):
        listed = owner.get("parameters")
        for index, raw in enumerate(listed if isinstance(listed, list) else []):
            param, _ = resolver.follow(raw, join_pointer(pointer, "parameters", index))
            if isinstance(param, Mapping):
                parameters.append(param)
    return OperationSecurity(f"{item.method} {item.path}", item.operation.get("security"), parameters)
