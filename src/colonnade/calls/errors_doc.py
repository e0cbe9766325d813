"""`docs/errors.md`, rendered from the error registry so the reference can never disagree with the code.

The registry (`calls/call_errors.py`) holds each code's status, meaning and fix; this module adds
what a reader needs around it: what each outcome status means, when a retry is safe, and what
each class of codes (the prefix) is about. `colonnade errors --markdown -o docs/errors.md`
(part of `make schemas`) writes the file; a test fails when the checked-in copy drifts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from colonnade.calls.call_errors import REGISTRY, ErrorSpec
from colonnade.calls.envelope import CallStatus

__all__ = ["ERROR_CLASSES", "STATUS_MEANINGS", "ErrorClass", "class_of", "grouped", "render_markdown"]


@dataclass(frozen=True, slots=True)
class ErrorClass:
    """A family of codes sharing a prefix, e.g. `R-UPSTREAM` for backends that failed transiently."""

    prefix: str
    name: str
    about: str

    def owns(self, code: str) -> bool:
        return code.startswith(self.prefix + "-")


ERROR_CLASSES: tuple[ErrorClass, ...] = (
    ErrorClass(
        "I-REQ",
        "Invalid request",
        "The request itself is wrong: a malformed envelope, arguments that break the tool's input "
        "schema (every violation is listed with its JSON pointer), an unknown tool, or a backend that "
        "refused the arguments. Sending the same request again gives the same answer.",
    ),
    ErrorClass(
        "A-AUTH",
        "Authentication and authorization",
        "Someone's credentials or origin were refused: the caller's (missing, expired, forged, for "
        "another audience or issuer, replayed, revoked), or the gateway's own credentials at the backend; "
        "or the caller is known but may not do this (scope, persona, subscription). At the HTTP edge "
        "they come with 401 (and a `WWW-Authenticate` challenge) or 403.",
    ),
    ErrorClass(
        "P-PRECOND",
        "Precondition",
        "The call is well formed but cannot run now: it needs a human's approval, or the backend's "
        "resource is in a state that conflicts with it.",
    ),
    ErrorClass(
        "R-TIMEOUT",
        "Timeout",
        "The call ran out of time (its timeout, its deadline or the tool's maximum). The backend may "
        "or may not have acted.",
    ),
    ErrorClass(
        "R-UPSTREAM",
        "Upstream, transient",
        "The backend is rate limiting, temporarily unavailable or unreachable. Retrying later can succeed.",
    ),
    ErrorClass(
        "R-CAP",
        "Capacity",
        "The gateway refused the call to protect a tool or itself (concurrency, rate limits); "
        "`details.retry_after_ms` says when to try again.",
    ),
    ErrorClass(
        "S-TOOL",
        "Tool fault",
        "The tool or the gateway failed: a backend server error, a misconfiguration an operator must fix, "
        "an unhealthy tool, or a fault inside the gateway.",
    ),
    ErrorClass(
        "C-CONTRACT",
        "Contract, catalog and version",
        "A contract cannot be loaded, validated, imported or published, the catalog refused a change, or the "
        "requested tool version cannot be served: no published version matches, or a version range "
        "does not resolve to exactly one version.",
    ),
    ErrorClass(
        "D-DATA",
        "Data integrity",
        "The backend answered, but its answer cannot be trusted: it breaks the tool's output schema or "
        "cannot be parsed. The result carries no output.",
    ),
)

STATUS_MEANINGS: Mapping[CallStatus, tuple[str, str]] = {
    CallStatus.SUCCESS: ("The call ran and `output` holds its result.", "Nothing to retry."),
    CallStatus.SUCCESS_PREP: (
        "Phase 1 of a two-phase commit succeeded; `commit_token` finalizes it (envelope version 2; "
        "version 1 reads it as `success` with the `commit_token`).",
        "Do not repeat the call: commit the token (`POST /v1/calls/commit`) before it expires, or give "
        "the call up at once (`POST /v1/calls/discard`).",
    ),
    CallStatus.PENDING: (
        "Nothing ran yet: the call is parked, awaiting a human's approval or the user's input (envelope "
        "version 2; version 1 reads it as `terminal_error` `P-PRECOND-APPROVAL-PENDING` or "
        "`P-PRECOND-INPUT-PENDING`, the same facts in `error.details`).",
        "Do what `pending.next_action` says before `pending.expires_at`: for an approval, wait for an "
        "approver, then send the same call again with the approval's token (or resume it by its id, "
        "`pending.token`); without a token, sending it again only asks for another approval.",
    ),
    CallStatus.RETRYABLE_ERROR: (
        "A transient failure; the same call may succeed later.",
        "Retry with exponential backoff, after `details.retry_after_ms` when given, within the deadline; "
        "for a tool with side effects only with the same `idempotency_key`.",
    ),
    CallStatus.TERMINAL_ERROR: (
        "The call failed and repeating it unchanged will fail again.",
        "Do not retry as is: follow the fix hint (change the call, get an approval, ask an operator).",
    ),
    CallStatus.INVALID_REQUEST: (
        "The request was rejected before anything ran.",
        "Never retry unchanged: correct what `error.details` points at, then send it again.",
    ),
}

_GENERATED_NOTE = (
    "<!-- Generated from src/colonnade/calls/call_errors.py by "
    "`colonnade errors --markdown -o docs/errors.md` "
    "(run `make schemas`). Do not edit by hand. -->"
)


def class_of(code: str) -> ErrorClass:
    """The class a code belongs to; a code outside every class is a registry mistake."""
    for error_class in ERROR_CLASSES:
        if error_class.owns(code):
            return error_class
    prefixes = ", ".join(c.prefix for c in ERROR_CLASSES)
    raise ValueError(f"error code {code!r} has no known class prefix ({prefixes})")


def grouped(specs: Iterable[ErrorSpec]) -> list[tuple[ErrorClass, list[ErrorSpec]]]:
    """Every class in taxonomy order with its codes in registry order (possibly none)."""
    by_class: dict[str, list[ErrorSpec]] = {c.prefix: [] for c in ERROR_CLASSES}
    for spec in specs:
        by_class[class_of(spec.code).prefix].append(spec)
    return [(c, by_class[c.prefix]) for c in ERROR_CLASSES]


def render_markdown(registry: Mapping[str, ErrorSpec] = REGISTRY) -> str:
    """The whole reference page, deterministic for a given registry, ending with one newline."""
    lines = [
        "# Error codes",
        "",
        _GENERATED_NOTE,
        "",
        "Every call through Colonnade, whatever the surface (MCP `tools/call`, `POST /v1/calls`), ends "
        "with one CallResult. Its `status` is definitive: a success never carries an error, and every "
        "other status carries `error` with a stable `code`, a `message`, `details` and a `fix` hint. "
        "Codes never change meaning; new ones are added.",
        "",
        "## Outcome statuses and retries",
        "",
        "| status | meaning | what to do |",
        "| --- | --- | --- |",
    ]
    for status, (meaning, todo) in STATUS_MEANINGS.items():
        lines.append(f"| `{status.value}` | {_cell(meaning)} | {_cell(todo)} |")
    lines += [
        "",
        "The status of a code is fixed, so a client can decide on retries from `status` alone. A retry is "
        'safe when the tool is pure or idempotent (`_meta["colonnade/determinism"]`), or when the call '
        "carries an `idempotency_key`: the gateway then returns the first outcome instead of running the "
        "call twice.",
        "",
        "## Codes by class",
    ]
    for error_class, specs in grouped(registry.values()):
        lines += ["", f"### {error_class.prefix}: {error_class.name}", "", error_class.about, ""]
        if not specs:
            lines.append("No code of this class is emitted yet.")
            continue
        lines += ["| code | status | meaning | fix |", "| --- | --- | --- | --- |"]
        lines += [f"| `{s.code}` | `{s.status.value}` | {_cell(s.title)} | {_cell(s.fix)} |" for s in specs]
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    """Table-safe text: a pipe would end the cell, a newline the row."""
    return " ".join(text.split()).replace("|", "\\|")
