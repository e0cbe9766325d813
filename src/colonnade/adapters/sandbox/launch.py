"""The sandbox launcher: confines itself, then starts the server as its only child and reports its end.

Run by the gateway as `python -I -S launch.py SPEC -- COMMAND ARGS...` in place of the server's own
command (`wrap.py`), so the SDK's stdio transport keeps owning the pipes and the process group. It uses
the standard library only and is run by path, so it starts fast and imports nothing of the gateway.

In order: join the cgroups the gateway made for this process, enter new mount, network, IPC and UTS
namespaces (and a user namespace when the gateway is not root), give private `/tmp`, `/var/tmp` and
`/dev/shm`, hide the data directory and the gateway's home behind empty read-only file systems (bringing
back the interpreter and the paths the settings expose), bring up a loopback of its own if asked (with
`network: allow`, the forwarder of `forward.py`, forked before the namespaces, relays the allowed ports
of the host's loopback into it), then fork. The child sets its resource limits, drops to the
unprivileged user with no new privileges, and executes the command. The launcher stays as the parent:
when the child ends it writes one line `colonnade-sandbox: {json}` to stderr saying why (killed at the
memory, CPU time or process limit, or a signal), which the gateway reads into `last_error`, the status
and the call's outcome.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import json
import os
import resource
import shutil
import signal
import socket
import struct
import sys
from typing import Any

MARKER = "colonnade-sandbox: "

_CLONE_NEWNS = 0x00020000
_CLONE_NEWUTS = 0x04000000
_CLONE_NEWIPC = 0x08000000
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWNET = 0x40000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_REMOUNT = 1, 2, 4, 32
_MS_BIND, _MS_REC, _MS_PRIVATE = 4096, 16384, 1 << 18
_PR_SET_PDEATHSIG, _PR_SET_NO_NEW_PRIVS = 1, 38
_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 0x1
_PRIVATE_DIRS = ("/tmp", "/var/tmp", "/dev/shm")

_libc = ctypes.CDLL(None, use_errno=True)


class SandboxError(Exception):
    """A confinement step failed: the server is not started."""


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise SandboxError(f"{what}: {os.strerror(errno)}")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    def c(text: str | None) -> bytes | None:
        return None if text is None else os.fsencode(text)

    _check(_libc.mount(c(source), c(target), c(fstype), ctypes.c_ulong(flags), c(data)), f"mount {target}")


def _unshare(flags: int) -> None:
    _check(_libc.unshare(ctypes.c_int(flags)), "unshare")


def _prctl(option: int, value: int) -> None:
    _check(_libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0), f"prctl {option}")


def _join_cgroups(directories: list[str]) -> None:
    for directory in directories:
        with open(os.path.join(directory, "cgroup.procs"), "w") as procs:
            procs.write(str(os.getpid()))


def _enter_namespaces(spec: dict[str, Any]) -> None:
    flags = _CLONE_NEWNS | _CLONE_NEWIPC | _CLONE_NEWUTS
    if spec["network"] != "host":
        flags |= _CLONE_NEWNET
    if spec["user_namespace"]:
        uid, gid = os.getuid(), os.getgid()
        _unshare(flags | _CLONE_NEWUSER)
        for name, text in (
            ("setgroups", "deny"),
            ("uid_map", f"{uid} {uid} 1"),
            ("gid_map", f"{gid} {gid} 1"),
        ):
            with open(f"/proc/self/{name}", "w") as map_file:
                map_file.write(text)
    else:
        _unshare(flags)
    _mount(None, "/", None, _MS_REC | _MS_PRIVATE)


def _shape_files(spec: dict[str, Any]) -> None:
    """Private temporary directories, hidden paths, and what is brought back under them."""
    exposed = [(path, os.open(path, os.O_PATH), writable) for path, writable in _exposures(spec)]
    for directory in _PRIVATE_DIRS:
        if os.path.isdir(directory):
            _mount("tmpfs", directory, "tmpfs", _MS_NOSUID | _MS_NODEV, "mode=1777,size=64m")
    hidden: list[str] = []
    for path in sorted(spec["hide"], key=len):
        if os.path.isdir(path):
            _mount("tmpfs", path, "tmpfs", _MS_NOSUID | _MS_NODEV, "mode=0755,size=1m")
            hidden.append(path)
        elif os.path.exists(path):
            _mount("/dev/null", path, None, _MS_BIND)
    for path, fd, writable in exposed:
        if not os.path.exists(path):
            if os.path.isdir(f"/proc/self/fd/{fd}"):
                os.makedirs(path, exist_ok=True)
            else:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                open(path, "a").close()
        _mount(f"/proc/self/fd/{fd}", path, None, _MS_BIND | _MS_REC)
        if not writable:
            _mount(None, path, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _MS_NOSUID)
        os.close(fd)
    for path in hidden:
        _mount(None, path, None, _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID | _MS_NODEV)


def _exposures(spec: dict[str, Any]) -> list[tuple[str, bool]]:
    """(path, writable): the settings' paths, and the command's install prefixes that lie in hidden places."""
    wanted = [(path, False) for path in spec["fs_read"]] + [(path, True) for path in spec["fs_write"]]
    for prefix in _command_prefixes(spec["command"], spec["path"]):
        if any(prefix == hide or prefix.startswith(hide.rstrip("/") + "/") for hide in spec["hide"]):
            wanted.append((prefix, False))
    seen: set[str] = set()
    unique = []
    for path, writable in wanted:
        if path not in seen and os.path.exists(path):
            seen.add(path)
            unique.append((path, writable))
    return unique


def _command_prefixes(command: str, path: str | None) -> list[str]:
    """Where the executable (and a script's interpreter) is installed: `prefix/bin/name` -> `prefix`."""
    found = shutil.which(command, path=path)
    if found is None:
        return []
    executables = [found, os.path.realpath(found)]
    interpreter = _shebang(found)
    if interpreter is not None:
        executables += [interpreter, os.path.realpath(interpreter)]
    return [os.path.dirname(os.path.dirname(os.path.abspath(executable))) for executable in executables]


def _shebang(script: str) -> str | None:
    try:
        with open(script, "rb") as file:
            first = file.readline(256)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode("utf-8", "replace").split()
    return words[0] if words else None


def _loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(probe, _SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(probe, _SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | _IFF_UP))


def _become_server(spec: dict[str, Any], argv: list[str]) -> None:
    """In the child: limits, the unprivileged user, no new privileges, then the command."""
    for name, value in spec["rlimits"].items():
        limit = getattr(resource, f"RLIMIT_{name.upper()}")
        resource.setrlimit(limit, (value, value))
    if spec["uid"] is not None:
        os.setgroups([])
        os.setgid(spec["gid"])
        os.setuid(spec["uid"])
    _prctl(_PR_SET_NO_NEW_PRIVS, 1)
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    env = dict(os.environ)
    env.update(spec["env"])
    try:
        os.chdir(spec["cwd"] or "/tmp")
    except OSError as exc:
        if spec["cwd"]:
            raise SandboxError(
                f"its working directory {spec['cwd']} is not visible in the sandbox: {exc}"
            ) from exc
        os.chdir("/tmp")
    os.execvpe(argv[0], argv, env)


def _why_it_ended(spec: dict[str, Any], status: int, cpu_s: float) -> dict[str, Any] | None:
    """The reason the child ended, when the sandbox had a part in it (or it was killed)."""
    limits = spec["limits"]
    refused_forks = _counter(spec.get("pids_events"), "max")
    notes = (
        [f"{refused_forks} forks refused at the process limit of {limits['pids_max']}"]
        if refused_forks
        else []
    )
    if not os.WIFSIGNALED(status):
        return {"violation": "pids", "message": "; ".join(notes)} if notes else None
    sig = os.WTERMSIG(status)
    if _counter(spec.get("memory_events"), "oom_kill") or (
        sig == signal.SIGKILL and spec.get("memory_failcnt") and _read_int(spec["memory_failcnt"])
    ):
        kind, text = "memory", f"killed at its memory limit of {limits['memory_mb']} MB"
    elif sig == signal.SIGXCPU or (
        sig == signal.SIGKILL and limits.get("cpu_time_s") and cpu_s >= limits["cpu_time_s"] - 0.5
    ):
        kind, text = "cpu", f"killed at its CPU time limit of {limits['cpu_time_s']} s"
    elif sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        return None  # stopped by the gateway
    else:
        kind, text = "signal", f"killed by {signal.Signals(sig).name}"
    return {"violation": kind, "message": "; ".join([text, *notes])}


def _counter(path: str | None, key: str) -> int:
    if not path:
        return 0
    try:
        with open(path) as file:
            for line in file:
                name, _, value = line.partition(" ")
                if name == key:
                    return int(value)
    except (OSError, ValueError):
        return 0
    return 0


def _read_int(path: str) -> int:
    try:
        with open(path) as file:
            return int(file.read().strip() or 0)
    except (OSError, ValueError):
        return 0


def _signal_group(group: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, sig)


def _forwarder() -> Any:
    """`forward.py`, loaded by path: the launcher runs isolated (`-I`), without its folder on sys.path."""
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "forward.py")
    spec = importlib.util.spec_from_file_location("colonnade_sandbox_forward", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _report(record: dict[str, Any]) -> None:
    sys.stderr.write(MARKER + json.dumps(record) + "\n")
    sys.stderr.flush()


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        sys.stderr.write("usage: launch.py SPEC_JSON -- COMMAND [ARGS...]\n")
        return 2
    spec = json.loads(argv[1])
    command = argv[3:]
    try:
        forward: Any = _forwarder() if spec["network"] == "allow" else None
        channel = forward.start(spec) if forward is not None else None  # outside the server's cgroups
        _join_cgroups(spec["cgroups"])
        _enter_namespaces(spec)
        _shape_files(spec)
        if spec["network"] in ("loopback", "allow"):
            _loopback_up()
        if channel is not None:
            forward.hand_over(channel, spec["allow"])
    except (OSError, SandboxError) as exc:
        _report({"violation": "setup", "message": f"the sandbox could not be set up: {exc}"})
        return 126
    child = os.fork()
    if child == 0:
        try:
            os.setpgid(0, 0)  # its own group: the launcher ends whatever it leaves behind
            _become_server(spec, command)
        except (OSError, SandboxError) as exc:
            _report(
                {"violation": "setup", "message": f"the server could not be started in the sandbox: {exc}"}
            )
        os._exit(127)
    with contextlib.suppress(OSError):
        os.setpgid(child, child)  # also here: a signal may come before the child ran
    for forwarded in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(forwarded, lambda sig, _frame: _signal_group(child, sig))
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _, status, usage = os.wait4(child, 0)
    reason = _why_it_ended(spec, status, usage.ru_utime + usage.ru_stime)
    if reason is not None:
        _report(reason)
    _signal_group(child, signal.SIGKILL)  # what it forked must not hold the pipes open after it
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
