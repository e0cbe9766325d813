"""Compile a policy set in a child process first: a set the Rego engine cannot handle may abort it.

rego-cpp 1.5 aborts the whole process on some constructs it cannot compile (for instance a
bundle whose rules replace the whole input of a rule that calls a built-in). The gateway must
keep serving with its old policies then, so a new set is compiled and evaluated once in a child
Python first; only a set that survived is compiled in the gateway's own process.

Run as `python -m colonnade.governance.policy.isolation`: reads the files and settings as JSON
on stdin, prints `{"ok": true}` or `{"ok": false, "error": ...}`.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from colonnade.governance.policy.engine import CompiledPolicy, PolicyError
from colonnade.governance.policy.sources import PolicyFile, PolicySet

__all__ = ["compiles_in_child"]

_TIMEOUT_S = 30.0


def compiles_in_child(policy_set: PolicySet, settings: Mapping[str, Any]) -> str | None:
    """None when the set compiles and evaluates in a child process; else what went wrong."""
    payload = {
        "files": [[str(file.path), file.text] for file in policy_set.policies],
        "settings": dict(settings),
    }
    try:
        done = subprocess.run(
            [sys.executable, "-m", __name__],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            timeout=_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return f"compiling the policy set took longer than {_TIMEOUT_S:.0f} s"
    if done.returncode < 0:
        name = signal.Signals(-done.returncode).name
        return f"the Rego engine crashed ({name}) compiling or evaluating the policy set"
    lines = done.stdout.strip().splitlines()
    try:
        answer = json.loads(lines[-1]) if lines else {}
    except json.JSONDecodeError:
        answer = {}
    if answer.get("ok") is True:
        return None
    return str(answer.get("error") or f"the policy compiler exited with status {done.returncode}")


def _main() -> None:
    payload = json.loads(sys.stdin.read())
    files = tuple(PolicyFile(Path(path), text) for path, text in payload["files"])
    policy_set = PolicySet(tuple({file.path.parent for file in files}), files)
    try:
        CompiledPolicy(policy_set, payload["settings"])  # compiles, and decides one sample call
    except PolicyError as exc:
        print(json.dumps({"ok": False, "error": str(exc)}))
        return
    print(json.dumps({"ok": True}))


if __name__ == "__main__":
    _main()
