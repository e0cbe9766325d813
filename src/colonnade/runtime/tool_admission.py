"""Federated tools pinned on admission: a downstream server cannot change a tool under its callers.

The first listing of a server admits its tools (trust on first use) and pins each definition's
digest (`catalog/tool_pins.py`), unless a poisoning check (`catalog/poisoning.py`) asks for review.
Later listings are compared with the pins: a changed definition is quarantined (or, with
`on_change: keep`, served at its admitted definition) and parked with a readable diff; a new tool
waits unless the server says `admit: auto`. A parked change is admitted by two different people
(four-eyes); the same person approving twice is refused. Every change, approval and refusal is an
audit record carrying both digests. Pins live in `data_dir/admission/`, one JSON file per server.

A stdio server with `pin_command` has its command's files pinned the same way under the key
`@command` (`check_command`): pinned at the first start (or to the configured sha256), and a
changed file parks the change and holds the server down until two people admit it.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import json
import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import mcp_types as types

from colonnade.adapters.command_digest import EXECUTABLE
from colonnade.catalog.poisoning import check_definition
from colonnade.catalog.tool_pins import AdmissionRefused, definition_diff, definition_digest, definition_of
from colonnade.config import McpServerSettings
from colonnade.contracts.findings import Finding
from colonnade.governance.audit import AuditEvent, EventKind
from colonnade.governance.principal import Principal

__all__ = [
    "APPROVALS_NEEDED",
    "COMMAND_KEY",
    "AdmissionRefused",
    "Admitted",
    "Parked",
    "Pin",
    "ToolAdmission",
]

logger = logging.getLogger("colonnade.servers")

APPROVALS_NEEDED = 2
"""Different people who must approve a parked tool before it is admitted (four-eyes)."""

COMMAND_KEY = "@command"
"""The ledger's name for a stdio server's pinned command (no MCP tool name has an `@`)."""

Audit = Callable[[AuditEvent], Awaitable[object]]
_GATEWAY = Principal.system("tool-admission")


@dataclass(frozen=True, slots=True)
class Pin:
    """An admitted definition: what the gateway serves for this tool name."""

    definition: dict[str, Any]
    digest: str
    admitted_at: str
    admitted_by: list[str]
    warnings: list[dict[str, Any]] = field(default_factory=list)


@dataclass(slots=True)
class Parked:
    """A listed definition that waits for admission: a new tool, or a changed one."""

    tool: str
    kind: Literal["new", "changed", "command"]
    definition: dict[str, Any]
    digest: str
    admitted_digest: str | None
    diff: str
    findings: list[dict[str, Any]]
    blocked: bool
    since: str
    approvals: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Admitted:
    """What one approval did: admitted the tool (the second person), or counted one of two."""

    tool: str
    admitted: bool
    approvals: list[str]
    digest: str


@dataclass(slots=True)
class _Ledger:
    pins: dict[str, Pin] = field(default_factory=dict)
    parked: dict[str, Parked] = field(default_factory=dict)
    seen: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "seen": self.seen,
            "pins": {name: asdict(pin) for name, pin in self.pins.items()},
            "parked": {name: asdict(item) for name, item in self.parked.items()},
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> _Ledger:
        return cls(
            pins={name: Pin(**pin) for name, pin in data.get("pins", {}).items()},
            parked={name: Parked(**item) for name, item in data.get("parked", {}).items()},
            seen=bool(data.get("seen")),
        )


class ToolAdmission:
    """The pins of every downstream server; `review` decides what a listing may serve."""

    def __init__(self, folder: Path | None = None, audit: Audit | None = None) -> None:
        self.folder = folder
        self.audit = audit
        self._ledgers: dict[str, _Ledger] = {}
        self._pending_writes: set[asyncio.Task[object]] = set()

    # -- reviewing a listing ------------------------------------------------------------------

    def review(self, settings: McpServerSettings, tools: tuple[types.Tool, ...]) -> tuple[types.Tool, ...]:
        """The tools of this listing the gateway may serve (an admitted definition in place of a
        changed one when the server says `on_change: keep`); parks and audits what changed."""
        ledger = self._ledger(settings)
        first = not ledger.seen
        served: list[types.Tool] = []
        for tool in tools:
            shown = self._review_one(settings, ledger, tool, first)
            if shown is not None:
                served.append(shown)
        ledger.seen = True
        self._save(settings, ledger)
        return tuple(served)

    def _review_one(
        self, settings: McpServerSettings, ledger: _Ledger, tool: types.Tool, first: bool
    ) -> types.Tool | None:
        definition = definition_of(tool)
        digest = definition_digest(definition)
        pin = ledger.pins.get(tool.name)
        if pin is not None and pin.digest == digest:
            ledger.parked.pop(tool.name, None)  # the server went back to what was admitted
            return tool
        findings = check_definition(definition)
        errors = [f for f in findings if f.is_error]
        flagged = bool(errors) and settings.poisoning != "warn"
        if pin is None and not flagged and (first or settings.admit == "auto"):
            ledger.pins[tool.name] = _pin(
                definition, digest, ["first-listing" if first else "admit:auto"], findings
            )
            if findings:
                logger.warning(
                    "server %s: tool %s admitted with findings: %s",
                    settings.name,
                    tool.name,
                    _codes(findings),
                )
            self._emit(_event(settings, tool.name, "admitted", new=digest, findings=findings))
            return tool
        self._park(settings, ledger, tool.name, definition, digest, pin, findings)
        if pin is not None and settings.on_change == "keep":
            return _tool_of(pin.definition)
        return None

    def _park(
        self,
        settings: McpServerSettings,
        ledger: _Ledger,
        name: str,
        definition: dict[str, Any],
        digest: str,
        pin: Pin | None,
        findings: list[Finding],
    ) -> None:
        earlier = ledger.parked.get(name)
        if earlier is not None and earlier.digest == digest:
            return  # already parked: approvals given so far stand
        blocked = settings.poisoning == "block" and any(f.is_error for f in findings)
        ledger.parked[name] = Parked(
            tool=name,
            kind="new" if pin is None else "changed",
            definition=definition,
            digest=digest,
            admitted_digest=pin.digest if pin is not None else None,
            diff=definition_diff(pin.definition if pin is not None else None, definition),
            findings=[f.to_dict() for f in findings],
            blocked=blocked,
            since=_now(),
        )
        what = "changed" if pin is not None else "new"
        served = (
            "kept at its admitted definition"
            if pin is not None and settings.on_change == "keep"
            else "not served"
        )
        logger.warning(
            "server %s: %s tool %s parked for admission (%s)%s",
            settings.name,
            what,
            name,
            served,
            f"; poisoning findings {_codes(findings)}" if findings else "",
        )
        self._emit(
            _event(
                settings,
                name,
                "blocked" if blocked else f"parked-{what}",
                old=pin.digest if pin is not None else None,
                new=digest,
                findings=findings,
            )
        )

    # -- a stdio server's command -----------------------------------------------------------

    def check_command(self, settings: McpServerSettings, digests: dict[str, str]) -> str | None:
        """Why the server's command must not start (its files differ from the admitted ones: the
        change is parked as `@command`), or None. The first start pins the files, unless the
        configured `sha256` is not the executable's; a new configured `sha256` pins afresh."""
        ledger = self._ledger(settings)
        verdict = _command_verdict(settings, ledger.pins.get(COMMAND_KEY), digests)
        if verdict.outcome == "admitted":
            if ledger.parked.pop(COMMAND_KEY, None) is not None:  # the admitted file is back
                self._save(settings, ledger)
            return None
        if verdict.outcome == "pin":
            ledger.pins[COMMAND_KEY] = _pin(verdict.definition, verdict.digest, [verdict.by], [])
            ledger.parked.pop(COMMAND_KEY, None)
            self._save(settings, ledger)
            self._emit(_event(settings, COMMAND_KEY, "admitted", new=verdict.digest))
            return None
        earlier = ledger.parked.get(COMMAND_KEY)
        if earlier is None or earlier.digest != verdict.digest:
            ledger.parked[COMMAND_KEY] = Parked(
                tool=COMMAND_KEY,
                kind="command",
                definition=verdict.definition,
                digest=verdict.digest,
                admitted_digest=verdict.admitted_digest,
                diff=_files_diff(verdict.admitted, digests),
                findings=[],
                blocked=False,
                since=_now(),
            )
            self._save(settings, ledger)
            logger.warning("server %s: its command changed since it was admitted; not started", settings.name)
            self._emit(
                _event(
                    settings, COMMAND_KEY, "parked-command", old=verdict.admitted_digest, new=verdict.digest
                )
            )
        return verdict.refusal(settings)

    def command_standing(self, settings: McpServerSettings, digests: dict[str, str]) -> tuple[bool, str]:
        """(would start, why) for the command's files as they are now, changing nothing (preflight)."""
        verdict = _command_verdict(settings, self._ledger(settings).pins.get(COMMAND_KEY), digests)
        if verdict.outcome == "admitted":
            return True, f"pinned, unchanged ({verdict.digest[:12]})"
        if verdict.outcome == "pin":
            return True, f"not pinned yet: pinned at its next start (admitted by {verdict.by})"
        return False, verdict.refusal(settings)

    # -- deciding ---------------------------------------------------------------------------

    async def approve(
        self, settings: McpServerSettings, tool: str, approver: str, principal: Principal | None = None
    ) -> Admitted:
        """One person's approval of a parked tool; the second different person admits it. `approver`
        is who approves (a principal key); `principal`, when given, is the audit record's actor."""
        ledger = self._ledger(settings)
        parked = ledger.parked.get(tool)
        if parked is None:
            waiting = ", ".join(sorted(ledger.parked)) or "none"
            raise AdmissionRefused(
                "unknown",
                f"no tool {tool!r} of server {settings.name} waits for admission (waiting: {waiting})",
            )
        if parked.blocked:
            await self._record(
                _event(settings, tool, "refused-blocked", new=parked.digest, actor=approver, by=principal)
            )
            raise AdmissionRefused(
                "blocked",
                f"{settings.name}:{tool} is blocked by the poisoning policy ({_codes_of(parked.findings)}); "
                "the server must change the definition, or the operator set `poisoning: approve`",
            )
        if approver in parked.approvals:
            await self._record(
                _event(
                    settings, tool, "refused-self-approval", new=parked.digest, actor=approver, by=principal
                )
            )
            raise AdmissionRefused(
                "self-approval",
                f"{approver} already approved {settings.name}:{tool}; a second, different person must "
                "approve it",
            )
        parked.approvals.append(approver)
        admitted = len(parked.approvals) >= APPROVALS_NEEDED
        if admitted:
            ledger.pins[tool] = _pin(parked.definition, parked.digest, list(parked.approvals), [])
            del ledger.parked[tool]
        self._save(settings, ledger)
        outcome = "admitted" if admitted else "approved-1-of-2"
        await self._record(
            _event(
                settings,
                tool,
                outcome,
                old=parked.admitted_digest,
                new=parked.digest,
                actor=approver,
                by=principal,
            )
        )
        return Admitted(tool, admitted, list(parked.approvals), parked.digest)

    # -- reading ------------------------------------------------------------------------------

    def admitted(self, settings: McpServerSettings, tool: str) -> dict[str, Any] | None:
        """The definition a tool is served with: its admitted one; None when it is not admitted (yet)
        or is quarantined (changed, under `on_change: quarantine`)."""
        ledger = self._ledger(settings)
        pin = ledger.pins.get(tool)
        if pin is None or (tool in ledger.parked and settings.on_change == "quarantine"):
            return None
        return pin.definition

    def pins(self, settings: McpServerSettings) -> dict[str, Any]:
        """The server's pins and parked tools as plain data (diffs and findings included)."""
        ledger = self._ledger(settings)
        return {
            "server": settings.name,
            "admit": settings.admit,
            "on_change": settings.on_change,
            "poisoning": settings.poisoning,
            "pinned": {
                name: {
                    "digest": p.digest,
                    "admitted_at": p.admitted_at,
                    "admitted_by": p.admitted_by,
                    "warnings": p.warnings,
                }
                for name, p in sorted(ledger.pins.items())
            },
            "parked": [asdict(item) for _, item in sorted(ledger.parked.items())],
        }

    async def flushed(self) -> None:
        """Wait until the audit records of the reviews so far are written."""
        while self._pending_writes:
            await asyncio.gather(*list(self._pending_writes), return_exceptions=True)

    # -- internals ----------------------------------------------------------------------------

    def _ledger(self, settings: McpServerSettings) -> _Ledger:
        key = _key(settings)
        ledger = self._ledgers.get(key)
        if ledger is None:
            ledger = self._load(key)
            self._ledgers[key] = ledger
        return ledger

    def _load(self, key: str) -> _Ledger:
        if self.folder is None:
            return _Ledger()
        path = self.folder / f"{key}.json"
        try:
            return _Ledger.from_json(json.loads(path.read_text(encoding="utf-8")))
        except FileNotFoundError:
            return _Ledger()
        except (ValueError, TypeError, KeyError) as exc:
            raise RuntimeError(
                f"the tool pins in {path} cannot be read ({exc}); restore the file from a backup, or "
                "delete it to admit the server's tools afresh at its next listing"
            ) from exc

    def _save(self, settings: McpServerSettings, ledger: _Ledger) -> None:
        if self.folder is None:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"{_key(settings)}.json"
        temporary = path.with_suffix(".json.tmp")
        temporary.write_text(json.dumps(ledger.to_json(), indent=1, sort_keys=True), encoding="utf-8")
        os.replace(temporary, path)

    def _emit(self, event: AuditEvent) -> None:
        """An audit record from a listing (a synchronous callback): written on the running loop."""
        if self.audit is None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            logger.error("tool admission audit record dropped (no event loop): %s", event.details)
            return
        task: asyncio.Task[object] = loop.create_task(self._record(event))
        self._pending_writes.add(task)
        task.add_done_callback(self._pending_writes.discard)

    async def _record(self, event: AuditEvent) -> None:
        if self.audit is None:
            return
        with contextlib.suppress(asyncio.CancelledError):
            try:
                await self.audit(event)
            except Exception:
                logger.exception("writing the tool admission audit record failed: %s", event.details)


def _key(settings: McpServerSettings) -> str:
    return f"{settings.tenant}__{settings.name}"


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _pin(definition: dict[str, Any], digest: str, by: list[str], findings: list[Finding]) -> Pin:
    return Pin(definition, digest, _now(), by, [f.to_dict() for f in findings])


@dataclass(frozen=True, slots=True)
class _CommandVerdict:
    """What the command's files are against its pin: admitted, to be pinned now, or changed."""

    outcome: Literal["admitted", "pin", "changed"]
    digests: dict[str, str]
    definition: dict[str, Any]
    digest: str
    admitted: dict[str, str]
    admitted_digest: str | None
    by: str

    def refusal(self, settings: McpServerSettings) -> str:
        changed = sorted(
            name if name != EXECUTABLE else self.digests[name].rsplit(" sha256:", 1)[0]
            for name in {*self.admitted, *self.digests}
            if self.admitted.get(name) != self.digests.get(name)
        )
        return (
            f"the command of stdio server {settings.name!r} is not the admitted one ({', '.join(changed)}"
            " changed): it does not start until two people admit the change (`colonnade servers admit "
            f"{settings.name} {COMMAND_KEY}`, or the admissions page) or the admitted file is restored"
        )


def _command_verdict(
    settings: McpServerSettings, pin: Pin | None, digests: dict[str, str]
) -> _CommandVerdict:
    configured = settings.pin_command.sha256 if settings.pin_command is not None else None
    definition = {"name": COMMAND_KEY, "files": digests, "configured_sha256": configured}
    digest = definition_digest({"files": digests})
    by = "colonnade.yaml" if configured is not None else "first-start"
    if pin is not None and pin.definition.get("configured_sha256") == configured:
        outcome: Literal["admitted", "pin", "changed"] = "admitted" if pin.digest == digest else "changed"
        return _CommandVerdict(outcome, digests, definition, digest, pin.definition["files"], pin.digest, by)
    if configured is None or digests[EXECUTABLE].endswith(f"sha256:{configured}"):
        return _CommandVerdict("pin", digests, definition, digest, {}, None, by)
    where = digests[EXECUTABLE].rsplit(" sha256:", 1)[0]
    admitted = {EXECUTABLE: f"{where} sha256:{configured}"}
    return _CommandVerdict("changed", digests, definition, digest, admitted, None, by)


def _files_diff(admitted: dict[str, str], listed: dict[str, str]) -> str:
    """The pinned files, one `name: digest` line each, admitted against found now."""

    def lines(files: dict[str, str]) -> list[str]:
        return [f"{name}: {value}" for name, value in sorted(files.items())]

    diff = difflib.unified_diff(lines(admitted), lines(listed), "admitted", "on disk now", lineterm="", n=2)
    return "\n".join(diff)


def _codes(findings: list[Finding]) -> str:
    return ", ".join(sorted({f.code for f in findings}))


def _codes_of(findings: list[dict[str, Any]]) -> str:
    return ", ".join(sorted({str(f["code"]) for f in findings}))


def _tool_of(definition: dict[str, Any]) -> types.Tool:
    """The admitted definition as a listed tool again (`on_change: keep`)."""
    annotations = definition.get("annotations")
    return types.Tool(
        name=definition["name"],
        title=definition.get("title"),
        description=definition.get("description"),
        input_schema=definition.get("input_schema") or {"type": "object"},
        output_schema=definition.get("output_schema"),
        annotations=types.ToolAnnotations(**annotations) if annotations else None,
    )


def _event(
    settings: McpServerSettings,
    tool: str,
    outcome: str,
    *,
    new: str,
    old: str | None = None,
    findings: list[Finding] | None = None,
    actor: str | None = None,
    by: Principal | None = None,
) -> AuditEvent:
    details: dict[str, Any] = {"server": settings.name, "admitted_digest": old, "listed_digest": new}
    if findings:
        details["findings"] = sorted({f.code for f in findings})
    if actor is not None:
        details["approver"] = actor
    kind = EventKind.SERVER_TOOL_APPROVE if actor is not None else EventKind.SERVER_TOOL_CHANGE
    if outcome.startswith("refused"):
        kind = EventKind.SERVER_TOOL_REFUSE
    return AuditEvent.by(
        by or _GATEWAY,
        kind,
        tenant=settings.tenant,
        tool=f"{settings.tenant}:{settings.name}:{tool}",
        outcome=outcome,
        details=details,
    )
