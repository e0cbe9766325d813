"""The files of a policy set: which `.rego` files decide, which test them, and the set's version.

A policy directory holds `.rego` files side by side; `*_test.rego` files are the policies' own
tests and never decide a call. Subfolders are not read (the shipped `examples/` are there to be
copied, not obeyed). The version is a digest of every policy file's name and text, so the same
sources give the same version on every replica.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

__all__ = [
    "SHIPPED_POLICIES",
    "PolicyFile",
    "PolicySet",
    "PolicySourceError",
    "fingerprint",
    "policy_directories",
]

SHIPPED_POLICIES = Path(str(files("colonnade") / "policies"))
"""The policies Colonnade ships (installed with the package)."""

_TEST_SUFFIX = "_test.rego"


class PolicySourceError(Exception):
    """A policy directory or file cannot be read; the message names it."""


@dataclass(frozen=True, slots=True)
class PolicyFile:
    path: Path
    text: str

    @property
    def is_test(self) -> bool:
        return self.path.name.endswith(_TEST_SUFFIX)

    @property
    def module_name(self) -> str:
        """A module name unique within the set: the directory's name and the file's."""
        return f"{self.path.parent.name}/{self.path.name}"


@dataclass(frozen=True, slots=True)
class PolicySet:
    """The policy and test files of some directories, read at one moment."""

    directories: tuple[Path, ...]
    files: tuple[PolicyFile, ...]

    @classmethod
    def read(cls, directories: Sequence[Path]) -> PolicySet:
        found: list[PolicyFile] = []
        for directory in directories:
            found.extend(_read_directory(directory))
        return cls(tuple(directories), tuple(found))

    @property
    def policies(self) -> tuple[PolicyFile, ...]:
        return tuple(file for file in self.files if not file.is_test)

    @property
    def tests(self) -> tuple[PolicyFile, ...]:
        return tuple(file for file in self.files if file.is_test)

    @property
    def version(self) -> str:
        """`sha256:` and the first 16 hex digits of the digest of every policy file's name and text."""
        digest = hashlib.sha256()
        for file in sorted(self.policies, key=lambda file: file.module_name):
            digest.update(file.module_name.encode())
            digest.update(b"\0")
            digest.update(file.text.encode())
            digest.update(b"\0")
        return f"sha256:{digest.hexdigest()[:16]}"


def policy_directories(builtin: bool, directories: Iterable[Path]) -> tuple[Path, ...]:
    """The shipped policies (when `builtin`) followed by the user's directories."""
    return (*((SHIPPED_POLICIES,) if builtin else ()), *directories)


def fingerprint(directories: Sequence[Path]) -> tuple[tuple[str, int, int], ...]:
    """Names, sizes and modification times of the `.rego` files: changes when any file changes."""
    seen: list[tuple[str, int, int]] = []
    for directory in directories:
        if not directory.is_dir():
            seen.append((str(directory), -1, -1))
            continue
        for path in sorted(directory.glob("*.rego")):
            try:
                stat = path.stat()
            except OSError:
                continue
            seen.append((str(path), stat.st_size, stat.st_mtime_ns))
    return tuple(seen)


def _read_directory(directory: Path) -> list[PolicyFile]:
    if not directory.is_dir():
        raise PolicySourceError(f"{directory}: no such policy directory (check policy.directories)")
    found = []
    for path in sorted(directory.glob("*.rego")):
        try:
            found.append(PolicyFile(path, path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError) as exc:
            raise PolicySourceError(f"{path}: cannot be read ({exc})") from exc
    return found
