"""Render a CallResult as an MCP CallToolResult: structured content, a JSON text block, typed _meta.

A call that a downstream MCP server answered is rendered from that answer instead (its content
blocks, structured content and `_meta`), with the gateway's envelope added to `_meta`, when the
gateway let the answer stand (a success, or the tool's own error).

`_meta["colonnade/result"]` is envelope version 2 without its output (which the content carries)
unless the call asked for version 1 (`_meta["colonnade/envelope_version"]: 1`): then it is the
whole version 1 envelope, output included, valid against `call-result-v1.schema.json`.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
from pydantic import ValidationError

from colonnade.calls.call_errors import TOOL_ERROR
from colonnade.calls.envelope import RESULT_META_KEY, CallResult, EnvelopeVersion
from colonnade.calls.envelope_v1 import rendered
from colonnade.contracts.output_shape import wrap_result

__all__ = [
    "DRY_RUN_TEXT",
    "MCP_ENVELOPE_VERSION",
    "RESULT_META_KEY",
    "as_served",
    "envelope_meta",
    "model_defaults",
    "render_answer",
    "render_result",
    "result_body",
]


DRY_RUN_TEXT = (
    "dry run passed: the call is valid and authorized, and was not executed (call again without "
    '_meta["colonnade/dry_run"] to run it)'
)


MCP_ENVELOPE_VERSION: EnvelopeVersion = 2
"""What an MCP caller that does not ask gets: its text rendering of a parked call reads `pending`."""


def envelope_meta(result: CallResult, version: EnvelopeVersion = MCP_ENVELOPE_VERSION) -> dict[str, Any]:
    """The envelope `_meta["colonnade/result"]` carries, in the version the call asked for."""
    if version == 1:
        return rendered(result, 1)
    return result.model_dump(mode="json", exclude={"output"}, exclude_none=True)


def render_result(
    result: CallResult,
    *,
    legacy: bool,
    dry_run: bool = False,
    version: EnvelopeVersion = MCP_ENVELOPE_VERSION,
) -> types.CallToolResult:
    """`result_body` as the SDK's typed model, for callers that hold on to it."""
    body = result_body(result, dry_run=dry_run, version=version)
    return types.CallToolResult.model_validate(body, by_name=False)


def result_body(
    result: CallResult, *, dry_run: bool = False, version: EnvelopeVersion = MCP_ENVELOPE_VERSION
) -> dict[str, Any]:
    """The CallToolResult of a call in its wire form: success carries the output; any other status
    is `isError` with code, message and fix.

    A dict, not the SDK's model: the SDK validates a handler's result against the tools/call result
    of the client's protocol version and dumps it anyway, so building and dumping a model first
    would check the same thing twice. `resultType` is there for 2026-07-28 (the SDK drops it for
    handshake-era clients).

    Structured content is an object in both eras: an array or a scalar travels as
    `{"result": ...}`, as the tool's listed output schema says.

    A dry run that passed has no output. MCP clients check a non-error result against the tool's
    listed output schema (the SDK raises on missing, null or partial structured content, in both
    eras), and no value fits every schema, so it is rendered like a parked call: a tool result
    flagged `isError`, without structured content, whose text says that the call passed;
    `_meta["colonnade/result"]` carries `status: success`.
    """
    meta = {RESULT_META_KEY: envelope_meta(result, version)}
    if result.ok and dry_run:
        return _body(DRY_RUN_TEXT, meta, is_error=True)
    if result.ok:
        text = json.dumps(result.output, ensure_ascii=False, separators=(",", ":"))
        return _body(text, meta, is_error=False, structured=wrap_result(result.output))
    if result.pending is not None:
        # Nothing ran: the call is parked. A tool error (not a success without the output its
        # schema promises), whose text tells the model what to do next.
        pending = result.pending
        text = f"pending ({pending.reason}): {pending.next_action}\ntoken: {pending.token}"
        return _body(text, meta, is_error=True)
    error = result.error
    assert error is not None, "a non-success CallResult always carries an error"
    # No structured content on errors: some clients check it against the tool's output schema
    # even when isError is set. The error travels in the text and in _meta["colonnade/result"].
    return _body(f"{error.code}: {error.message}\nfix: {error.fix}", meta, is_error=True)


def _body(
    text: str, meta: dict[str, Any], *, is_error: bool, structured: dict[str, Any] | None = None
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "resultType": "complete",
        "content": [{"type": "text", "text": text}],
        "isError": is_error,
        "_meta": meta,
    }
    if structured is not None:
        body["structuredContent"] = structured
    return body


def proxied_replay(
    result: CallResult, version: EnvelopeVersion = MCP_ENVELOPE_VERSION
) -> dict[str, Any] | None:
    """A proxied tool's recorded success answered again (an idempotency replay: no server answered
    this time) with the content blocks the server first sent, when they are all its output holds
    (a server's answer without structured content); None otherwise (`result_body` renders it)."""
    output = result.output
    if not result.ok or not isinstance(output, dict) or output.keys() != {"content"}:
        return None
    try:
        blocks = types.CallToolResult.model_validate({"content": output["content"]}, by_name=False)
    except ValidationError:
        return None  # not content blocks after all: structured content that looks like them
    served = blocks.model_dump(mode="json", by_alias=True, exclude_none=True)["content"]
    return {
        "resultType": "complete",
        "content": served,
        "isError": False,
        "_meta": {RESULT_META_KEY: envelope_meta(result, version)},
    }


def render_answer(
    result: CallResult,
    answer: dict[str, Any] | None,
    *,
    legacy: bool,
    version: EnvelopeVersion = MCP_ENVELOPE_VERSION,
) -> types.CallToolResult | dict[str, Any]:
    """The downstream server's own answer, as served, when it stands; else `render_result`."""
    code = result.error.code if result.error is not None else None
    if answer is None or not (result.ok or code == TOOL_ERROR):
        return render_result(result, legacy=legacy, version=version)
    served = as_served(answer)
    envelope = envelope_meta(result, version)
    return {**served, "_meta": {**(served.get("_meta") or {}), RESULT_META_KEY: envelope}}


def model_defaults(rendered: dict[str, Any]) -> dict[str, Any]:
    """A rendered answer (a fresh dict) with the defaults `CallToolResult` would dump: `/mcp` serves
    what a model of it serialised to, without building one (`isError` is its only default there)."""
    rendered.setdefault("isError", False)
    return rendered


def as_served(answer: dict[str, Any]) -> dict[str, Any]:
    """A downstream server's answer as the gateway serves it, to a client of either era.

    A handshake-era server's answer has no `resultType`, which 2026-07-28 requires (the SDK drops it
    again for handshake-era clients); its `serverInfo` stamp goes, as the gateway stamps its own.
    """
    served = {"resultType": "complete", **answer}
    meta = served.get("_meta")
    if not isinstance(meta, dict) or types.SERVER_INFO_META_KEY not in meta:
        return served
    rest = {key: value for key, value in meta.items() if key != types.SERVER_INFO_META_KEY}
    if rest:
        return {**served, "_meta": rest}
    return {key: value for key, value in served.items() if key != "_meta"}
