"""`/ui/tools/{name}`: one tool in full, and the 404 page that suggests the names meant.

It shows what REST's `GET /v1/tools/{name}` returns (same name resolution: canonical, wire or
unique bare name; a bare name several tools bear is answered with them as the suggestions) plus
the limits the pipeline enforces (the tool's manifest). Backend addresses and
credential names stay out, as in REST: they are the operators' business, not callers'.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from colonnade.calls.manifest import ToolManifest
from colonnade.catalog.catalog import Catalog
from colonnade.catalog.tool import Tool
from colonnade.contracts.llm_ready import CRITERIA
from colonnade.surfaces.pages.badges import governance_badges, side_effects_badge
from colonnade.surfaces.pages.catalog_page import api_of
from colonnade.surfaces.pages.html import Child, Html, join, separated, tag
from colonnade.surfaces.pages.layout import Visitor, document
from colonnade.surfaces.pages.links import api_url, catalog_url, tool_json_url, tool_link

__all__ = ["tool_page", "unknown_tool_page"]


def tool_page(
    catalog: Catalog,
    tool: Tool,
    manifest: ToolManifest,
    visitor: Visitor | None = None,
    trial: Child = None,
) -> Html:
    """The page; `trial` is the "try this tool" part (`try_tool.py`: its form, or a call's outcome)."""
    llm = tool.llm
    json_url = tool_json_url(tool.wire_name)
    return document(
        tool.title,
        tag("h1", tool.title, " ", side_effects_badge(tool), " ", governance_badges(tool)),
        tag(
            "p",
            tag("code", tool.canonical_name),
            " · wire name ",
            tag("code", tool.wire_name),
            class_="muted",
        ),
        tag("p", llm.summary, id="summary") if llm is not None else None,
        tag("p", tag("strong", "When to use: "), llm.intent, id="intent") if llm is not None else None,
        tag("h2", "Description"),
        tag("p", tool.description or "(none)", class_="prose", id="description"),
        tag("h2", "Facts"),
        _facts(catalog, tool),
        tag("h2", "Input"),
        _properties(tool.input_schema),
        _json(tool.input_schema, "input-schema"),
        tag("h2", "Output"),
        _json(tool.output_schema, "output-schema")
        if tool.output_schema is not None
        else tag("p", "No output schema declared.", class_="muted"),
        tag("h2", "Examples"),
        _examples(tool),
        *_llm_ready(tool),
        tag("h2", "Limits"),
        _limits(tool, manifest),
        tag("h2", "Annotations"),
        _json(asdict(tool.annotations), "annotations"),
        tag("h2", "_meta"),
        _json(tool.meta(), "meta"),
        trial,
        tag("p", "As JSON: ", tag("a", json_url, href=json_url)),
        section="Catalog",
        visitor=visitor,
    )


def _llm_ready(tool: Tool) -> tuple[Html, ...]:
    """The seven criteria a contract's tool misses, each with its rule (nothing for other sources)."""
    failing = tool.llm_ready_failing
    if failing is None:
        return ()
    if not failing:
        said: Html = tag("p", "Meets the seven LLM-ready criteria (R1-R7).", id="llm-ready")
    else:
        rules = {c.code: c for c in CRITERIA}
        said = tag(
            "ul",
            *(tag("li", tag("code", code), f" {rules[code].name}: {rules[code].rule}") for code in failing),
            id="llm-ready",
        )
    return tag("h2", "LLM-ready"), said


def unknown_tool_page(
    catalog: Catalog,
    name: str,
    visible: Callable[[Tool], bool] | None = None,
    visitor: Visitor | None = None,
) -> Html:
    near = [
        n for n in catalog.near(name, limit=6) if visible is None or ((t := catalog.get(n)) and visible(t))
    ][:3]
    suggestion: Child = (
        tag("p", "Did you mean ", separated(tool_link(n) for n in near), "?", id="did-you-mean")
        if near
        else None
    )
    return document(
        "Unknown tool",
        tag("h1", "Unknown tool"),
        tag("p", f"No tool named {name!r} is in the catalog (I-REQ-UNKNOWN-TOOL)."),
        suggestion,
        tag("p", "Search the ", tag("a", "catalog", href=catalog_url(q=name)), " by what the tool does."),
        section="Catalog",
        visitor=visitor,
    )


def _facts(catalog: Catalog, tool: Tool) -> Html:
    facts: list[tuple[str, Child]] = [
        ("API", tag("a", api_of(tool), href=api_url(api_of(tool)))),
        ("Contract version", tag("span", tool.version, id="version")),
        ("Versions known", _versions(catalog, tool)),
        ("Side effects", side_effects_badge(tool)),
        ("Determinism", tool.determinism.value),
        ("Safe for agents", "yes" if tool.safe_for_agents else "no"),
        ("Requires human approval", "yes" if tool.requires_human_approval else "no"),
        ("Operation", tag("code", tool.operation)),
        ("Tags", ", ".join(tool.tags) or "—"),
        ("Owner", tool.owner or "—"),
        ("Source", tool.source),
        ("Digest", tag("code", tool.digest)),
    ]
    return tag("dl", *(join(tag("dt", label), tag("dd", value)) for label, value in facts), class_="facts")


def _versions(catalog: Catalog, tool: Tool) -> Html:
    deprecated = {
        entry.version
        for entry in catalog.api_versions()
        if (entry.tenant, entry.api) == (tool.tenant, tool.api) and entry.deprecated
    }
    labels = []
    for version in catalog.tool_versions(tool.canonical_name):
        flags = (("served", version == tool.version), ("deprecated", version in deprecated))
        notes = [note for note, on in flags if on]
        labels.append(version + (f" ({', '.join(notes)})" if notes else ""))
    return tag("span", ", ".join(labels) or tool.version, id="versions")


def _properties(schema: dict[str, Any]) -> Html:
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not properties:
        return tag("p", "No named arguments.", class_="muted")
    required = set(schema.get("required") or [])
    head = tag(
        "tr", tag("th", "Argument"), tag("th", "Type"), tag("th", "Required"), tag("th", "Description")
    )
    rows = (
        tag(
            "tr",
            tag("td", tag("code", name)),
            tag("td", _type_of(spec)),
            tag("td", "yes" if name in required else ""),
            tag("td", spec.get("description", "") if isinstance(spec, dict) else ""),
            data_argument=name,
        )
        for name, spec in properties.items()
    )
    return tag("table", tag("thead", head), tag("tbody", *rows), id="arguments")


def _type_of(spec: object) -> str:
    if not isinstance(spec, dict):
        return "any"
    if "enum" in spec and isinstance(spec["enum"], list):
        return "one of " + ", ".join(json.dumps(v, ensure_ascii=False) for v in spec["enum"])
    kind = spec.get("type", "any")
    return " | ".join(map(str, kind)) if isinstance(kind, list) else str(kind)


def _examples(tool: Tool) -> Html:
    examples = tool.llm.examples if tool.llm is not None else []
    if not examples:
        return tag("p", "The contract gives no examples.", class_="muted")
    return join(
        *(
            join(
                tag("h3", f"Example {number}"),
                _json(example.input, f"example-{number}"),
                tag("p", "The result contains ", tag("code", example.expected_text()), "."),
            )
            for number, example in enumerate(examples, start=1)
        )
    )


def _limits(tool: Tool, manifest: ToolManifest) -> Html:
    limits, slo = manifest.limits, manifest.slo
    two_phase = tool.runtime.two_phase
    facts: list[tuple[str, str]] = [
        ("Timeout (default)", f"{limits.timeout_ms_default} ms"),
        ("Timeout (largest a caller may ask)", f"{limits.timeout_ms_max} ms"),
        ("Calls in flight at most", str(limits.concurrency_max) if limits.concurrency_max else "no limit"),
        ("Success rate objective", f"{slo.success_rate_min:.2%}"),
        ("p95 latency objective", f"{slo.p95_latency_ms_max} ms" if slo.p95_latency_ms_max else "none"),
        (
            "Two-phase commit",
            f"yes: confirm within {two_phase.window_ms} ms" if two_phase is not None else "no",
        ),
    ]
    return tag(
        "dl",
        *(join(tag("dt", label), tag("dd", value)) for label, value in facts),
        class_="facts",
        id="limits",
    )


def _json(value: object, element_id: str) -> Html:
    rendered = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    return tag("pre", tag("code", rendered), id=element_id)
