"""Control groups for one sandboxed process: made with its limits before it starts, removed after it ends.

cgroup v2 (one unified tree) when the host mounts it with controllers, else the v1 controllers
(`memory`, `pids`, `cpu`) each has its own tree. The gateway makes and removes them, so a process
killed with its whole group leaves nothing behind: what is still in a group is killed on removal.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["CgroupHost", "Cgroups", "probe"]

_ROOT = Path("/sys/fs/cgroup")
_PERIOD_US = 100_000
_EMPTY_WAIT_S = 2.0


@dataclass(frozen=True, slots=True)
class CgroupHost:
    """Which controllers this host lets the gateway use (v2 or v1), by name -> base directory."""

    version: int | None
    controllers: dict[str, Path]


def probe(root: Path = _ROOT) -> CgroupHost:
    """What the host offers; writable only (a non-root gateway usually gets none)."""
    unified = root / "cgroup.controllers"
    if unified.is_file():
        offered = set(unified.read_text().split())
        base = root / "colonnade"
        usable: dict[str, Path] = {name: base for name in ("memory", "pids", "cpu") if name in offered}
        return CgroupHost(2, usable) if usable and os.access(root, os.W_OK) else CgroupHost(None, {})
    usable = {
        str(name): root / name / "colonnade"
        for name in ("memory", "pids", "cpu")
        if (root / name).is_dir() and os.access(root / name, os.W_OK)
    }
    return CgroupHost(1 if usable else None, usable)


@dataclass(slots=True)
class Cgroups:
    """The groups of one process start, with the files the launcher reads to say why it ended."""

    directories: list[Path] = field(default_factory=list)
    memory_events: Path | None = None
    memory_failcnt: Path | None = None
    pids_events: Path | None = None

    @classmethod
    def make(
        cls,
        host: CgroupHost,
        name: str,
        *,
        memory_mb: int | None,
        cpu_percent: int | None,
        pids_max: int | None,
    ) -> Cgroups:
        groups = cls()
        leaf = f"{name}-{secrets.token_hex(4)}"
        try:
            if host.version == 2:
                groups._make_v2(host, leaf, memory_mb, cpu_percent, pids_max)
            elif host.version == 1:
                groups._make_v1(host, leaf, memory_mb, cpu_percent, pids_max)
        except OSError:
            groups.remove()
            raise
        return groups

    def _make_v2(
        self,
        host: CgroupHost,
        leaf: str,
        memory_mb: int | None,
        cpu_percent: int | None,
        pids_max: int | None,
    ) -> None:
        base = next(iter(host.controllers.values()))
        base.mkdir(exist_ok=True)
        wanted = " ".join(f"+{name}" for name in host.controllers)
        (base.parent / "cgroup.subtree_control").write_text(wanted)
        (base / "cgroup.subtree_control").write_text(wanted)
        group = base / leaf
        group.mkdir()
        self.directories.append(group)
        if memory_mb is not None and "memory" in host.controllers:
            (group / "memory.max").write_text(str(memory_mb * 1024 * 1024))
            with contextlib.suppress(OSError):
                (group / "memory.swap.max").write_text("0")
            self.memory_events = group / "memory.events"
        if pids_max is not None and "pids" in host.controllers:
            (group / "pids.max").write_text(str(pids_max))
            self.pids_events = group / "pids.events"
        if cpu_percent is not None and "cpu" in host.controllers:
            (group / "cpu.max").write_text(f"{cpu_percent * _PERIOD_US // 100} {_PERIOD_US}")

    def _make_v1(
        self,
        host: CgroupHost,
        leaf: str,
        memory_mb: int | None,
        cpu_percent: int | None,
        pids_max: int | None,
    ) -> None:
        settings: list[tuple[str, str, str]] = []
        if memory_mb is not None:
            limit = str(memory_mb * 1024 * 1024)
            settings += [
                ("memory", "memory.limit_in_bytes", limit),
                ("memory", "memory.memsw.limit_in_bytes", limit),
            ]
        if pids_max is not None:
            settings.append(("pids", "pids.max", str(pids_max)))
        if cpu_percent is not None:
            settings += [
                ("cpu", "cpu.cfs_period_us", str(_PERIOD_US)),
                ("cpu", "cpu.cfs_quota_us", str(cpu_percent * _PERIOD_US // 100)),
            ]
        made: dict[str, Path] = {}
        for controller, name, value in settings:
            if controller not in host.controllers:
                continue
            group = made.get(controller)
            if group is None:
                host.controllers[controller].mkdir(exist_ok=True)
                group = made[controller] = host.controllers[controller] / leaf
                group.mkdir()
                self.directories.append(group)
            try:
                (group / name).write_text(value)
            except OSError:
                if name != "memory.memsw.limit_in_bytes":  # absent without swap accounting
                    raise
        if "memory" in made:
            self.memory_events = made["memory"] / "memory.oom_control"
            self.memory_failcnt = made["memory"] / "memory.failcnt"
        if "pids" in made:
            self.pids_events = made["pids"] / "pids.events"

    def remove(self) -> None:
        """Kill what is left in the groups, then remove them."""
        for group in self.directories:
            deadline = time.monotonic() + _EMPTY_WAIT_S
            while time.monotonic() < deadline:
                pids = _members(group)
                if not pids:
                    break
                for pid in pids:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                time.sleep(0.02)
            with contextlib.suppress(OSError):
                group.rmdir()
        self.directories.clear()


def _members(group: Path) -> list[int]:
    try:
        return [int(line) for line in (group / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []
