"""`ToolDoc`: the text of one tool as the retrieval index sees it, field by field.

The index never reads catalog records directly: a `ToolDoc` keeps only what retrieval scores
(names, prose, parameter names and descriptions, the server or API a tool belongs to), so the
same index serves gateway tools and benchmark tool lists alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from colonnade.catalog.naming import split_canonical
from colonnade.catalog.tool import Tool
from colonnade.routing.tokenize import split_identifier

__all__ = [
    "FIELDS",
    "ToolDoc",
    "dense_text",
    "doc_from_benchmark",
    "doc_from_tool",
    "field_texts",
    "params_of",
]

# The searchable fields, in the order their weights are given (see `IndexConfig.field_weights`).
FIELDS: tuple[str, ...] = ("name", "summary", "description", "params", "server", "tags")

_INPUTS_LINE = "Inputs: "


@dataclass(frozen=True, slots=True)
class ToolDoc:
    """One tool's searchable text. `id` is what search results return (a canonical name in the gateway).

    `server_description` describes the server or API as a whole (indexed with the server name).
    """

    id: str
    name: str
    summary: str = ""
    intent: str = ""
    description: str = ""
    params: tuple[tuple[str, str], ...] = ()
    server: str = ""
    tags: tuple[str, ...] = ()
    server_description: str = ""

    def __post_init__(self) -> None:
        if not self.id:
            raise ValueError("a ToolDoc needs a non-empty id")


def field_texts(doc: ToolDoc) -> tuple[str, ...]:
    """The text of each field of `FIELDS`, in that order.

    Summary and intent share a field (both are short prose written for agents); the server's
    own description goes with the server name, since it describes every tool on that server.
    """
    params = " ".join(f"{name} {text}" for name, text in doc.params)
    server = f"{doc.server} {doc.server_description}".strip()
    return (
        doc.name,
        f"{doc.summary} {doc.intent}".strip(),
        doc.description,
        params,
        server,
        " ".join(doc.tags),
    )


def dense_text(doc: ToolDoc) -> str:
    """What a tool's embedding is computed from: its name and parameter names as words, its prose.

    Parameter names say what a tool works on ("station", "ticker", "slide") in few words; their
    descriptions and the API's description are left out: long and shared by many tools, they pull
    every vector of an API towards the same point (on LiveMCPBench dev they cost 4 nDCG points
    of dense-alone retrieval, `bench/dense_probe.py`).
    """
    name = " ".join(split_identifier(doc.name))
    params = " ".join(" ".join(split_identifier(param)) for param, _ in doc.params)
    return " ".join(part for part in (name, doc.summary, doc.intent, doc.description, params) if part)


def doc_from_tool(tool: Tool) -> ToolDoc:
    """The document of a catalog tool, identified by its canonical name.

    With an `llm` block the tool's description is only summary, intent and an inputs line, all
    indexed from their own fields, so it is not indexed again.
    """
    tenant, api, name = split_canonical(tool.canonical_name)
    llm = tool.llm
    return ToolDoc(
        id=tool.canonical_name,
        name=name,
        summary=llm.summary if llm else tool.title,
        intent=llm.intent if llm else "",
        description="" if llm else _without_inputs_line(tool.description),
        params=params_of(tool.input_schema),
        server=f"{tenant}:{api}",
        tags=tool.tags,
    )


def doc_from_benchmark(row: Mapping[str, Any]) -> ToolDoc:
    """The document of one line of a benchmark `tools.jsonl` (`id`, `name`, `description`,
    `input_schema`, `server`, and optionally `server_title`, `server_description`, `field`/`category`).
    """
    try:
        tool_id = str(row["id"])
    except KeyError:
        raise ValueError(f"tool row has no 'id': {dict(row)!r:.200}") from None
    server = str(row.get("server") or "")
    title = str(row.get("server_title") or "")
    about = " ".join(
        part for part in (title if title != server else "", _text(row.get("server_description"))) if part
    )
    group = row.get("field") or row.get("category")
    schema = row.get("input_schema")
    return ToolDoc(
        id=tool_id,
        name=str(row.get("name") or tool_id),
        description=_text(row.get("description")),
        params=params_of(schema if isinstance(schema, Mapping) else {}),
        server=server,
        tags=(str(group),) if group else (),
        server_description=about,
    )


def params_of(schema: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """(name, description) of each top-level property of a JSON Schema object."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return ()
    params: list[tuple[str, str]] = []
    for name, spec in properties.items():
        text = ""
        if isinstance(spec, Mapping):
            text = " ".join(_text(spec.get(key)) for key in ("title", "description") if spec.get(key))
        params.append((str(name), text))
    return tuple(params)


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def _without_inputs_line(description: str) -> str:
    lines = description.splitlines()
    return "\n".join(line for line in lines if not line.startswith(_INPUTS_LINE)).strip()
