"""What confinement a stdio server gets on this host: what applies, and what cannot be applied.

`plan()` is pure over the settings and a probe of the host, so `colonnade servers check`, the
start-up banner and the process start all say the same thing. A setting the host cannot enforce is
`missing`: under `enforce: strict` the server is refused (`refusal()`), under `warn` it starts and
the gap is reported.
"""

from __future__ import annotations

import os
import pwd
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from colonnade.adapters.sandbox.cgroups import CgroupHost, probe
from colonnade.config import McpServerSettings, SandboxSettings

__all__ = [
    "Confinement",
    "HostAbilities",
    "host_abilities",
    "launcher_prefix",
    "plan",
    "resolved_path",
    "summary",
]


@dataclass(frozen=True, slots=True)
class HostAbilities:
    root: bool
    cgroups: CgroupHost
    user_namespaces: bool
    ipv6_loopback: bool = False
    """Whether the host's loopback has `::1` (a sandbox's own loopback then has it too)."""

    def describe(self) -> str:
        cgroups = f"cgroup v{self.cgroups.version} ({', '.join(sorted(self.cgroups.controllers))})"
        return ", ".join(
            [
                "root" if self.root else f"uid {os.getuid()}",
                cgroups if self.cgroups.version else "no writable cgroups (rlimits instead)",
                "user namespaces" if self.user_namespaces else "no user namespaces",
                "IPv6 loopback" if self.ipv6_loopback else "no IPv6 loopback",
            ]
        )


def host_abilities() -> HostAbilities:
    return HostAbilities(
        root=os.geteuid() == 0,
        cgroups=probe(),
        user_namespaces=_user_namespaces(),
        ipv6_loopback=ipv6_loopback(),
    )


def ipv6_loopback() -> bool:
    """Whether `::1` can be bound here (IPv6 on, and the loopback has its address)."""
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as probe_socket:
            probe_socket.bind(("::1", 0))
    except OSError:
        return False
    return True


def _user_namespaces() -> bool:
    knob = Path("/proc/sys/kernel/unprivileged_userns_clone")
    try:
        return knob.read_text().strip() != "0"
    except OSError:
        return Path("/proc/self/ns/user").exists()


@dataclass(frozen=True, slots=True)
class Confinement:
    """The confinement of one server: `applied` (what is in force) and `missing` (what is not, and why)."""

    server: str
    enabled: bool
    enforce: str
    applied: dict[str, Any] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    spec: dict[str, Any] = field(default_factory=dict)
    """What the launcher is given (without the cgroup paths, which each start makes)."""

    def refusal(self) -> str | None:
        """Why the server must not start (strict, and something cannot be enforced), or None."""
        if not self.enabled or self.enforce != "strict" or not self.missing:
            return None
        return (
            f"stdio server {self.server!r} cannot be confined as configured on this host: "
            + "; ".join(self.missing)
            + ". Change the server's `sandbox` settings, or set `sandbox.enforce: warn` to start it anyway"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "enabled": self.enabled,
            "enforce": self.enforce,
            "applied": self.applied,
            "missing": self.missing,
        }


def plan(
    server: McpServerSettings, *, hidden: tuple[Path, ...] = (), host: HostAbilities | None = None
) -> Confinement:
    """The confinement `server` gets here; `hidden` are the gateway's own paths it must never see."""
    box = server.sandbox
    if server.transport != "stdio" or not box.enabled:
        return Confinement(server.name, False, box.enforce, {"sandbox": "off: runs as the gateway's user"})
    host = host if host is not None else host_abilities()
    applied: dict[str, Any] = {}
    missing: list[str] = []
    uid, gid, userns = _user(box, host, applied, missing)
    hide = _hidden(box, hidden)
    applied["namespaces"] = ["mount", "ipc", "uts", *([] if box.network == "host" else ["network"])] + (
        ["user"] if userns else []
    )
    applied["no_new_privileges"] = True
    applied["environment"] = "scrubbed: PATH, TERM, SHELL, HOME=/tmp and the server's env and secret_env"
    applied["tmp"] = "private /tmp, /var/tmp and /dev/shm"
    applied["hidden"] = hide
    applied["read"] = [os.fspath(path) for path in box.fs_read]
    applied["write"] = ["/tmp", *(os.fspath(path) for path in box.fs_write)]
    allowed = _allowed_ports(box, host, missing)
    applied["network"] = {
        "none": "none",
        "loopback": "its own loopback only",
        "allow": "its own loopback; forwarded to the host: "
        + (", ".join(_shown(address, port) for address, port in allowed) or "nothing"),
        "host": "the gateway's",
    }[box.network]
    rlimits: dict[str, int] = {"core": 0}
    _limits(box, host, applied, missing, rlimits)
    spec = {
        "uid": uid,
        "gid": gid,
        "user_namespace": userns,
        "network": box.network,
        "allow": allowed,
        "hide": hide,
        "fs_read": [os.path.abspath(path) for path in box.fs_read],
        "fs_write": [os.path.abspath(path) for path in box.fs_write],
        "rlimits": rlimits,
        "limits": {"memory_mb": box.memory_mb, "cpu_time_s": box.cpu_time_s, "pids_max": box.pids_max},
        "cwd": os.path.abspath(server.cwd) if server.cwd is not None else None,
        "env": {"HOME": "/tmp", **({"USER": box.user, "LOGNAME": box.user} if uid is not None else {})},
    }
    return Confinement(server.name, True, box.enforce, applied, missing, spec)


def _user(
    box: SandboxSettings, host: HostAbilities, applied: dict[str, Any], missing: list[str]
) -> tuple[int | None, int | None, bool]:
    if host.root:
        try:
            entry = pwd.getpwnam(box.user)
        except KeyError:
            missing.append(f"the user {box.user!r} does not exist on this host (sandbox.user)")
            return None, None, False
        if entry.pw_uid == 0:
            missing.append(f"sandbox.user {box.user!r} is root: name an unprivileged user")
            return None, None, False
        applied["user"] = f"{box.user} (uid {entry.pw_uid})"
        return entry.pw_uid, entry.pw_gid, False
    if host.user_namespaces:
        applied["user"] = f"the gateway's uid {os.getuid()} in a user namespace (not a separate user)"
        missing.append(f"a separate user {box.user!r} needs a root gateway: it runs with the gateway's uid")
        return None, None, True
    missing.append("neither a separate user (needs root) nor a user namespace is available")
    return None, None, False


_IPV4, _IPV6 = "127.0.0.1", "::1"
_LOOPBACK_NAMES: dict[str, tuple[str, ...]] = {
    _IPV4: (_IPV4,),
    _IPV6: (_IPV6,),
    f"[{_IPV6}]": (_IPV6,),
    "localhost": (_IPV4, _IPV6),  # a client may try either: both are forwarded where the host has both
}
_ALLOWED_FORMS = "127.0.0.1:PORT, [::1]:PORT or localhost:PORT"


def _allowed_ports(box: SandboxSettings, host: HostAbilities, missing: list[str]) -> list[list[Any]]:
    """The host's loopback (address, port) pairs `network: allow` forwards into the sandbox, sorted;
    what cannot be forwarded, in `missing`."""
    if box.network != "allow":
        if box.net_allowlist:
            missing.append(
                f"net_allowlist {box.net_allowlist} applies only with `network: allow` (this server has"
                f" network {box.network}): set network: allow, or remove net_allowlist"
            )
        return []
    pairs: set[tuple[str, int]] = set()
    for entry in box.net_allowlist:
        name, _, port = entry.rpartition(":")
        addresses = _LOOPBACK_NAMES.get(name.lower())
        if addresses is None or not port.isdigit() or not 0 < int(port) < 65536:
            missing.append(
                f"net_allowlist entry {entry!r} cannot be enforced: network allow forwards only the"
                f" gateway host's loopback ports ({_ALLOWED_FORMS}) into the sandbox,"
                " which has no route or name resolution to other hosts"
            )
            continue
        if addresses == (_IPV6,) and not host.ipv6_loopback:
            missing.append(
                f"net_allowlist entry {entry!r} cannot be enforced: this host has no IPv6 loopback (::1);"
                " allow 127.0.0.1:PORT instead, or enable IPv6 on the loopback"
            )
            continue
        pairs.update((address, int(port)) for address in addresses if address != _IPV6 or host.ipv6_loopback)
    if not box.net_allowlist:
        missing.append(f"network allow needs net_allowlist entries ({_ALLOWED_FORMS}): it allows nothing")
    return [[address, port] for address, port in sorted(pairs, key=lambda pair: (pair[0] == _IPV6, pair))]


def _shown(address: str, port: int) -> str:
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"


def _hidden(box: SandboxSettings, hidden: tuple[Path, ...]) -> list[str]:
    home = os.path.expanduser("~")
    paths = [*hidden, *box.hide, *([Path(home)] if home not in ("/", "") else [])]
    return sorted({os.path.abspath(path) for path in paths})


def _limits(
    box: SandboxSettings,
    host: HostAbilities,
    applied: dict[str, Any],
    missing: list[str],
    rlimits: dict[str, int],
) -> None:
    controllers = host.cgroups.controllers
    if box.memory_mb is not None:
        if "memory" in controllers:
            applied["memory"] = f"{box.memory_mb} MB (cgroup v{host.cgroups.version})"
        else:
            rlimits["as"] = box.memory_mb * 1024 * 1024
            applied["memory"] = f"{box.memory_mb} MB of address space (RLIMIT_AS: allocations fail, no kill)"
    if box.cpu_percent is not None:
        if "cpu" in controllers:
            applied["cpu"] = f"{box.cpu_percent}% of one core (cgroup v{host.cgroups.version})"
        else:
            missing.append(
                f"cpu_percent {box.cpu_percent} needs the cgroup cpu controller, not writable here"
            )
    if box.cpu_time_s is not None:
        rlimits["cpu"] = box.cpu_time_s
        applied["cpu_time"] = f"{box.cpu_time_s} s of CPU, then killed (RLIMIT_CPU)"
    if box.pids_max is not None:
        if "pids" in controllers:
            applied["processes"] = f"{box.pids_max} (cgroup v{host.cgroups.version})"
        elif host.root:
            rlimits["nproc"] = box.pids_max
            applied["processes"] = f"{box.pids_max} for user {box.user} (RLIMIT_NPROC)"
        else:
            missing.append(f"pids_max {box.pids_max} needs the cgroup pids controller or a separate user")


def launcher_prefix() -> list[str]:
    """The interpreter and script that run the launcher (standard library only, no site)."""
    import sys

    from colonnade.adapters.sandbox import launch

    return [sys.executable, "-I", "-S", os.path.abspath(launch.__file__)]


def resolved_path(server: McpServerSettings) -> str:
    """The PATH the command is looked up on (the server's `env.PATH`, else the gateway's)."""
    return server.env.get("PATH", os.environ.get("PATH", os.defpath))


def summary(confinement: Confinement) -> str:
    """One line: the confinement in force (for the start-up banner)."""
    if not confinement.enabled:
        return "no sandbox (runs as the gateway's user: set sandbox.enabled)"
    applied = confinement.applied
    parts = [
        f"user {applied.get('user', 'unchanged')}",
        f"network {applied['network']}",
        f"memory {applied.get('memory', 'unlimited')}",
        f"cpu {applied.get('cpu', 'unlimited')}",
        f"processes {applied.get('processes', 'unlimited')}",
        f"hidden {', '.join(applied['hidden']) or 'nothing'}",
    ]
    return "sandbox: " + "; ".join(parts)
