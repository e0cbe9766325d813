"""Compatibility between two versions of one API: every change classified, and the bump it needs.

A caller that worked against version N-1 must keep working against N unless N is a new major
version. The diff matches tools by their stable name (`llm.tool_name`, else the operation id); a
tool whose name changed but whose path and method did not is reported as renamed. Breaking changes
need a major bump, additive ones a minor bump, documentation-only ones a patch (semver.org; below
1.0.0 a minor bump counts as major, as npm's caret does).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from jsonschema import Draft202012Validator

from colonnade.contracts.findings import Finding, Severity
from colonnade.contracts.model import (
    Classification,
    Contract,
    ContractStatus,
    Environment,
    Operation,
    SideEffects,
)
from colonnade.contracts.schema_diff import ChangeClass, diff_schema
from colonnade.contracts.semver import parse_semver

__all__ = [
    "BREAKING_ALLOWED",
    "BREAKING_WITHOUT_MAJOR",
    "UNDERSTATED_BUMP",
    "Bump",
    "Change",
    "ChangeClass",
    "ContractDiff",
    "baseline_for",
    "changed_tools",
    "compatibility_findings",
    "diff_contracts",
]

BREAKING_WITHOUT_MAJOR = "CMP001"
UNDERSTATED_BUMP = "CMP002"
BREAKING_ALLOWED = "CMP003"

Bump = Literal["major", "minor", "patch", "none", "lower"]

_SIDE_EFFECT_RANK = {
    SideEffects.NONE: 0,
    SideEffects.READ: 1,
    SideEffects.WRITE: 2,
    SideEffects.DESTRUCTIVE: 3,
}
_CLASSIFICATION_RANK = {
    Classification.PUBLIC: 0,
    Classification.INTERNAL: 1,
    Classification.CONFIDENTIAL: 2,
    Classification.RESTRICTED: 3,
}
_ENVIRONMENT_RANK = {Environment.DEV: 0, Environment.STAGING: 1, Environment.PROD: 2}
_READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_NEEDS: dict[ChangeClass, Bump] = {
    ChangeClass.BREAKING: "major",
    ChangeClass.ADDITIVE: "minor",
    ChangeClass.DOCUMENTATION: "patch",
}
_BUMP_RANK: dict[Bump, int] = {"lower": -1, "none": 0, "patch": 1, "minor": 2, "major": 3}


@dataclass(frozen=True, slots=True)
class Change:
    """One difference between the versions: `tool` is the stable tool name ("" for the whole API)."""

    kind: str
    change_class: ChangeClass
    tool: str
    path: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {
            "class": self.change_class.value,
            "kind": self.kind,
            "tool": self.tool,
            "path": self.path,
            "message": self.message,
        }

    def line(self) -> str:
        where = f"{self.tool}: " if self.tool else ""
        return f"{self.kind} {where}{self.message}"


@dataclass(frozen=True, slots=True)
class ContractDiff:
    """What changed from `old` to `new` and whether the version bump says as much."""

    api: str
    old_version: str
    new_version: str
    changes: tuple[Change, ...]

    def of(self, change_class: ChangeClass) -> list[Change]:
        return [c for c in self.changes if c.change_class is change_class]

    @property
    def breaking(self) -> list[Change]:
        return self.of(ChangeClass.BREAKING)

    @property
    def required_bump(self) -> Bump:
        """The smallest bump these changes need ("none" when nothing changed)."""
        needed: Bump = "none"
        for change in self.changes:
            if _BUMP_RANK[_NEEDS[change.change_class]] > _BUMP_RANK[needed]:
                needed = _NEEDS[change.change_class]
        return needed

    @property
    def actual_bump(self) -> Bump:
        return _bump(self.old_version, self.new_version)

    @property
    def bump_suffices(self) -> bool:
        actual = self.actual_bump
        return actual != "lower" and _BUMP_RANK[actual] >= _BUMP_RANK[self.required_bump]

    @property
    def suggested_version(self) -> str:
        old = parse_semver(self.old_version)
        needed = self.required_bump
        if needed == "major":
            return f"{old.major + 1}.0.0" if old.major > 0 else f"0.{old.minor + 1}.0"
        if needed == "minor":
            return f"{old.major}.{old.minor + 1}.0"
        return f"{old.major}.{old.minor}.{old.patch + 1}"

    def to_dict(self) -> dict[str, Any]:
        counts = {cls.value: len(self.of(cls)) for cls in ChangeClass}
        return {
            "api": self.api,
            "old_version": self.old_version,
            "new_version": self.new_version,
            "required_bump": self.required_bump,
            "actual_bump": self.actual_bump,
            "bump_suffices": self.bump_suffices,
            "counts": counts,
            "changes": [c.to_dict() for c in self.changes],
        }


def diff_contracts(old: Contract, new: Contract) -> ContractDiff:
    """Every change a caller of `old` would meet in `new`, in a stable order (breaking first)."""
    changes = [*_api_changes(old, new), *_tool_changes(old, new)]
    order = {ChangeClass.BREAKING: 0, ChangeClass.ADDITIVE: 1, ChangeClass.DOCUMENTATION: 2}
    changes.sort(key=lambda c: order[c.change_class])
    return ContractDiff(f"{new.tenant}/{new.name}", old.version, new.version, tuple(changes))


def baseline_for(new: Contract, stored: Iterable[Contract]) -> Contract | None:
    """The version `new` must stay compatible with: the highest published (or deprecated) version
    of the same API that precedes it; None for a first version."""
    newer = parse_semver(new.version)
    earlier = [
        c
        for c in stored
        if (c.tenant, c.name) == (new.tenant, new.name)
        and c.status is not ContractStatus.DRAFT
        and parse_semver(c.version) < newer
    ]
    return max(earlier, key=lambda c: parse_semver(c.version)) if earlier else None


def compatibility_findings(diff: ContractDiff, *, allow_breaking: bool = False) -> list[Finding]:
    """CMP001 (error) for breaking changes under a non-major bump, CMP003 (warning) when an override
    allows them, CMP002 (warning) for additive changes under a patch bump."""
    if diff.bump_suffices:
        return []
    breaking = diff.breaking
    if breaking:
        listed = "; ".join(c.line() for c in breaking[:8])
        more = f" (and {len(breaking) - 8} more)" if len(breaking) > 8 else ""
        head = (
            f"{diff.api} {diff.old_version} -> {diff.new_version} is a {diff.actual_bump} bump but has "
            f"{len(breaking)} breaking change(s): {listed}{more}"
        )
        if allow_breaking:
            return [
                Finding(
                    BREAKING_ALLOWED,
                    Severity.WARNING,
                    "/version",
                    f"{head}; published anyway (--allow-breaking)",
                    "callers pinned to the old version may fail; tell them, or publish a major version",
                )
            ]
        return [
            Finding(
                BREAKING_WITHOUT_MAJOR,
                Severity.ERROR,
                "/version",
                head,
                f"publish it as {diff.suggested_version} (a new major version; {diff.old_version} stays "
                "served to the callers that pin it), or undo the breaking changes; to publish anyway, "
                "pass --allow-breaking --reason '...' (recorded in the audit log)",
            )
        ]
    listed = "; ".join(c.line() for c in diff.of(ChangeClass.ADDITIVE)[:5])
    return [
        Finding(
            UNDERSTATED_BUMP,
            Severity.WARNING,
            "/version",
            f"{diff.api} {diff.old_version} -> {diff.new_version} adds to the API ({listed}) under a "
            f"{diff.actual_bump} bump",
            f"publish it as {diff.suggested_version}: new tools and arguments call for a minor version",
        )
    ]


def _bump(old: str, new: str) -> Bump:
    before, after = parse_semver(old), parse_semver(new)
    if after[:5] == before[:5]:
        return "none"
    if after[:5] < before[:5]:
        return "lower"
    if after.major > before.major or (before.major == 0 and after.minor > before.minor):
        return "major"
    if after.major == before.major and after.minor > before.minor:
        return "minor"
    return "patch"


# --- the API as a whole --------------------------------------------------------------------------


def _api_changes(old: Contract, new: Contract) -> Iterator[Change]:
    before = _CLASSIFICATION_RANK.get(old.classification, 0) if old.classification else 0
    after = _CLASSIFICATION_RANK.get(new.classification, 0) if new.classification else 0
    if after > before:
        yield Change(
            "access-tightened",
            ChangeClass.BREAKING,
            "",
            "/classification",
            f"classification {_name(old.classification)} -> {_name(new.classification)}: "
            "personas cleared for the old level may lose access",
        )
    elif after < before:
        yield Change("access-widened", ChangeClass.ADDITIVE, "", "/classification", "classification lowered")
    env_before = _ENVIRONMENT_RANK[old.environment or Environment.PROD]
    env_after = _ENVIRONMENT_RANK[new.environment or Environment.PROD]
    if env_after > env_before:
        yield Change(
            "access-tightened",
            ChangeClass.BREAKING,
            "",
            "/environment",
            f"environment {_name(old.environment)} -> {_name(new.environment)}: developers lose write access",
        )
    if old.backend != new.backend:
        yield Change("binding-changed", ChangeClass.DOCUMENTATION, "", "/backend", "the backend changed")
    for field in ("display_name", "description", "owner"):
        if getattr(old, field) != getattr(new, field):
            yield Change("documentation", ChangeClass.DOCUMENTATION, "", f"/{field}", f"{field} changed")


def _name(value: Any) -> str:
    return "(none)" if value is None else str(getattr(value, "value", value))


# --- tools -------------------------------------------------------------------------------------


def _tools(contract: Contract) -> dict[str, Operation]:
    return {op.tool_name: op for op in contract.operations() if op.endpoint.mcp}


def _tool_changes(old: Contract, new: Contract) -> Iterator[Change]:
    before, after = _tools(old), _tools(new)
    by_route = {(op.endpoint.path, op.method): op for op in after.values()}
    renamed_to: set[str] = set()
    for name, op in before.items():
        if name in after:
            yield from _compare_tool(name, op, after[name])
            continue
        successor = by_route.get((op.endpoint.path, op.method))
        if successor is not None and successor.tool_name not in before:
            renamed_to.add(successor.tool_name)
            yield Change(
                "tool-renamed",
                ChangeClass.BREAKING,
                name,
                successor.pointer,
                f"renamed to {successor.tool_name!r} ({op.method} {op.endpoint.path}): callers of the "
                "old name get 'unknown tool'",
            )
            yield from _compare_tool(name, op, successor)
            continue
        hidden = op.endpoint.mcp is False
        why = "no longer exposed as a tool" if hidden else "removed"
        yield Change(
            "tool-removed", ChangeClass.BREAKING, name, op.pointer, f"{why}: its callers get 'unknown tool'"
        )
    for name, op in after.items():
        if name not in before and name not in renamed_to:
            yield Change(
                "tool-added",
                ChangeClass.ADDITIVE,
                name,
                op.pointer,
                f"new tool ({op.method} {op.endpoint.path})",
            )


def _compare_tool(name: str, old: Operation, new: Operation) -> Iterator[Change]:
    pointer = new.pointer
    for change in diff_schema(
        old.endpoint.effective_input_schema(), new.endpoint.effective_input_schema(), "input"
    ):
        yield Change(
            change.kind, change.change_class, name, f"{pointer}/input_schema{change.pointer}", change.message
        )
    yield from _outputs(name, old, new)
    yield from _effects(name, old, new)
    yield from _governance(name, old, new)
    yield from _runtime(name, old, new)
    if (old.endpoint.path, old.method, old.endpoint.backend_url) != (
        new.endpoint.path,
        new.method,
        new.endpoint.backend_url,
    ) or old.endpoint.effective_body_media_type != new.endpoint.effective_body_media_type:
        yield Change(
            "binding-changed",
            ChangeClass.DOCUMENTATION,
            name,
            pointer,
            f"backend call {old.method} {old.endpoint.path} -> {new.method} {new.endpoint.path}; "
            "callers see no change",
        )
    yield from _texts(name, old, new)
    yield from _carried_examples(name, old, new)


def _carried_examples(name: str, old: Operation, new: Operation) -> Iterator[Change]:
    """N/N-1: every example input of the old version must still be a valid call of the new one."""
    if old.endpoint.llm is None:
        return
    validator = Draft202012Validator(new.endpoint.effective_input_schema())
    for index, example in enumerate(old.endpoint.llm.examples):
        problem = next(iter(validator.iter_errors(example.input)), None)
        if problem is not None:
            where = "/".join(str(part) for part in problem.absolute_path) or "(arguments)"
            yield Change(
                "example-rejected",
                ChangeClass.BREAKING,
                name,
                f"{old.pointer}/llm/examples/{index}",
                f"example {index} of {old.contract.version} is no longer a valid call "
                f"({where}: {problem.message})",
            )


def _outputs(name: str, old: Operation, new: Operation) -> Iterator[Change]:
    before, after = old.endpoint.output_schema, new.endpoint.output_schema
    pointer = f"{new.pointer}/output_schema"
    if before is None and after is not None:
        yield Change("output-documented", ChangeClass.ADDITIVE, name, pointer, "the result now has a schema")
    elif before is not None and after is None:
        yield Change(
            "output-retyped",
            ChangeClass.BREAKING,
            name,
            pointer,
            "the result's schema was dropped: nothing is promised any more",
        )
    elif before is not None and after is not None:
        for change in diff_schema(before, after, "output"):
            yield Change(change.kind, change.change_class, name, f"{pointer}{change.pointer}", change.message)


def _side_effects(op: Operation) -> SideEffects:
    if op.endpoint.llm is not None:
        return op.endpoint.llm.side_effects
    if op.method in _READ_METHODS:
        return SideEffects.READ
    return SideEffects.DESTRUCTIVE if op.method == "DELETE" else SideEffects.WRITE


def _effects(name: str, old: Operation, new: Operation) -> Iterator[Change]:
    before, after = _side_effects(old), _side_effects(new)
    pointer = f"{new.pointer}/llm/side_effects"
    if _SIDE_EFFECT_RANK[after] > _SIDE_EFFECT_RANK[before]:
        yield Change(
            "side-effects-raised",
            ChangeClass.BREAKING,
            name,
            pointer,
            f"side effects {before.value} -> {after.value}: "
            "policies, approvals and retries treat it differently",
        )
    elif after != before:
        yield Change(
            "side-effects-lowered",
            ChangeClass.ADDITIVE,
            name,
            pointer,
            f"side effects {before.value} -> {after.value}",
        )


def _governance(name: str, old: Operation, new: Operation) -> Iterator[Change]:
    before, after = old.endpoint.llm, new.endpoint.llm
    approval_before = before.requires_human_approval if before else False
    approval_after = after.requires_human_approval if after else False
    pointer = f"{new.pointer}/llm"
    if approval_before and not approval_after:
        yield Change(
            "approval-dropped",
            ChangeClass.BREAKING,
            name,
            f"{pointer}/requires_human_approval",
            "calls no longer wait for a person's approval",
        )
    elif approval_after and not approval_before:
        yield Change(
            "approval-added",
            ChangeClass.ADDITIVE,
            name,
            f"{pointer}/requires_human_approval",
            "calls now wait for a person's approval",
        )
    safe_before = before.safe_for_agents if before else True
    safe_after = after.safe_for_agents if after else True
    if safe_before and not safe_after:
        yield Change(
            "access-tightened",
            ChangeClass.BREAKING,
            name,
            f"{pointer}/safe_for_agents",
            "safe_for_agents true -> false: autonomous agents lose access",
        )
    elif safe_after and not safe_before:
        yield Change(
            "access-widened",
            ChangeClass.ADDITIVE,
            name,
            f"{pointer}/safe_for_agents",
            "agents may now call it",
        )


def _runtime(name: str, old: Operation, new: Operation) -> Iterator[Change]:
    before, after = old.endpoint.runtime, new.endpoint.runtime
    if before == after:
        return
    pointer = f"{new.pointer}/runtime"
    two_before = before.two_phase if before else None
    two_after = after.two_phase if after else None
    if (two_before is None) != (two_after is None):
        what = (
            "now answers success_prep and needs a commit"
            if two_after
            else "no longer prepares: it acts at once"
        )
        yield Change("two-phase-changed", ChangeClass.BREAKING, name, f"{pointer}/two_phase", what)
    det_before = before.determinism if before else None
    det_after = after.determinism if after else None
    if det_before is not None and det_after is not None and det_after != det_before:
        weaker = det_after.value == "side_effectful" or (
            det_before.value == "pure" and det_after.value == "idempotent"
        )
        if weaker:
            yield Change(
                "determinism-weakened",
                ChangeClass.BREAKING,
                name,
                f"{pointer}/determinism",
                f"determinism {det_before.value} -> {det_after.value}: repeating a call is no longer safe",
            )
    yield Change("runtime-changed", ChangeClass.DOCUMENTATION, name, pointer, "limits or timeouts changed")


def _texts(name: str, old: Operation, new: Operation) -> Iterator[Change]:
    before, after = old.endpoint.llm, new.endpoint.llm
    changed = [
        field
        for field in ("summary", "intent", "examples")
        if (getattr(before, field) if before else None) != (getattr(after, field) if after else None)
    ]
    if old.endpoint.description != new.endpoint.description:
        changed.append("description")
    if old.endpoint.tags != new.endpoint.tags:
        changed.append("tags")
    if changed:
        yield Change(
            "documentation",
            ChangeClass.DOCUMENTATION,
            name,
            f"{new.pointer}/llm",
            f"{', '.join(changed)} changed",
        )


def changed_tools(diff: ContractDiff) -> Sequence[str]:
    """The stable names of the tools a breaking change touches, for audit records."""
    return sorted({c.tool for c in diff.breaking if c.tool})
