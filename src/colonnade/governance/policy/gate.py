"""The policy set in force: loaded at start, reloaded when its files change, never left broken.

A new set is read, compiled (in a child process first, unless it is only the shipped policies)
and swapped in whole. If it fails, the set in force keeps serving and the failure is kept in
`problem` (shown by `GET /v1/policy` and `GET /v1/status`) and logged. With no set in force at
all, every decision raises `PolicyUnavailable`: the policy stage then refuses the call.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from colonnade.catalog.tool import Tool
from colonnade.config import PolicySettings
from colonnade.governance.policy.call_input import CallInputs
from colonnade.governance.policy.decision import PolicyDecision
from colonnade.governance.policy.engine import CompiledPolicy, PolicyError
from colonnade.governance.policy.isolation import compiles_in_child
from colonnade.governance.policy.rego_tests import RegoTestResult, run_rego_tests
from colonnade.governance.policy.sources import (
    SHIPPED_POLICIES,
    PolicySet,
    PolicySourceError,
    fingerprint,
    policy_directories,
)
from colonnade.governance.principal import Principal

__all__ = ["PolicyGate", "PolicyUnavailable"]

logger = logging.getLogger(__name__)


class PolicyUnavailable(Exception):
    """No policy set can decide (none loaded, or evaluation failed): the call must be refused."""


@dataclass(slots=True)
class _Loaded:
    policy: CompiledPolicy
    loaded_at: datetime
    files: tuple[str, ...]
    inputs: CallInputs
    """Recorded input parts, kept with the set they were used for: a reload starts afresh."""


@dataclass
class PolicyGate:
    directories: tuple[Path, ...]
    data: Mapping[str, Any] = field(default_factory=dict)
    time_zones: Mapping[str, str] = field(default_factory=dict)
    isolate: bool = True
    reload_interval_s: float = 2.0
    problem: str | None = None
    problem_at: datetime | None = None
    _loaded: _Loaded | None = None
    _seen: tuple[tuple[str, int, int], ...] = ()

    @classmethod
    def from_settings(cls, settings: PolicySettings) -> PolicyGate:
        gate = cls(
            policy_directories(settings.builtin, settings.directories),
            data=settings.data,
            time_zones=settings.time_zones,
            isolate=settings.isolate_compilation,
            reload_interval_s=settings.reload_interval_s,
        )
        gate.load()
        return gate

    @property
    def version(self) -> str | None:
        return self._loaded.policy.version if self._loaded is not None else None

    def load(self) -> bool:
        """Read, compile and swap in the policy files; on failure keep the set in force."""
        policy_set = self._read()
        return policy_set is not None and self._swap(policy_set, self._child_problem(policy_set))

    async def reload(self) -> bool:
        """`load`, with the child process waited for off the event loop's thread."""
        policy_set = self._read()
        if policy_set is None:
            return False
        return self._swap(policy_set, await asyncio.to_thread(self._child_problem, policy_set))

    def run_tests(self) -> list[RegoTestResult]:
        """The `test_` rules of the `*_test.rego` files in the policy directories, with the policies
        beside them (what `colonnade policy test` runs); raises PolicySourceError or PolicyError."""
        return run_rego_tests(PolicySet.read(self.directories), self.data)

    def changed(self) -> bool:
        return fingerprint(self.directories) != self._seen

    async def run(self) -> None:
        """While serving: reload when a policy file changes (checked every `reload_interval_s`)."""
        if self.reload_interval_s <= 0:
            return
        while True:
            await asyncio.sleep(self.reload_interval_s)
            if self.changed():
                await self.reload()

    def decide(
        self,
        principal: Principal,
        tool: Tool,
        arguments: Mapping[str, Any],
        context: Mapping[str, Any] | None = None,
    ) -> PolicyDecision:
        """`context`: what the call met before the policy (guardrail findings, the session's flow)."""
        loaded = self._loaded
        if loaded is None:
            raise PolicyUnavailable(f"no policy set is loaded: {self.problem or 'not loaded yet'}")
        try:
            ops = loaded.inputs.ops(principal, tool, arguments, context=context)
        except ValueError as exc:
            logger.error("policy input of %s refused: %s", tool.canonical_name, exc)
            raise PolicyUnavailable(f"the input cannot be given to the policies: {exc}") from None
        try:
            return loaded.policy.evaluate_ops(ops)
        except PolicyError as exc:
            logger.error("policy %s failed on %s: %s", loaded.policy.version, tool.canonical_name, exc)
            raise PolicyUnavailable(str(exc)) from None

    def status(self) -> dict[str, Any]:
        loaded = self._loaded
        return {
            "version": loaded.policy.version if loaded is not None else None,
            "loaded_at": loaded.loaded_at.isoformat() if loaded is not None else None,
            "files": list(loaded.files) if loaded is not None else [],
            "directories": [str(directory) for directory in self.directories],
            "problem": self.problem,
            "problem_at": self.problem_at.isoformat() if self.problem_at is not None else None,
            "serving": loaded is not None,
        }

    def _read(self) -> PolicySet | None:
        self._seen = fingerprint(self.directories)
        try:
            return PolicySet.read(self.directories)
        except PolicySourceError as exc:
            self._failed(str(exc))
            return None

    def _swap(self, policy_set: PolicySet, problem: str | None) -> bool:
        if problem is None:
            try:
                compiled = CompiledPolicy(policy_set, self.data)
            except PolicyError as exc:
                problem = str(exc)
        if problem is not None:
            self._failed(problem)
            return False
        files = tuple(str(file.path) for file in policy_set.policies)
        self._loaded = _Loaded(compiled, datetime.now(UTC), files, CallInputs(self.time_zones))
        self.problem = self.problem_at = None
        logger.info("policy set %s loaded from %d files", compiled.version, len(files))
        return True

    def _child_problem(self, policy_set: PolicySet) -> str | None:
        if not self.isolate or all(f.path.parent == SHIPPED_POLICIES for f in policy_set.policies):
            return None
        return compiles_in_child(policy_set, self.data)

    def _failed(self, problem: str) -> None:
        self.problem, self.problem_at = problem, datetime.now(UTC)
        kept = f"policy set {self.version} keeps serving" if self._loaded else "every call is refused"
        logger.error("policy set not loaded (%s): %s", kept, problem)
