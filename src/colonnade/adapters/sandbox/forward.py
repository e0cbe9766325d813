"""`network: allow`: the host's allowed loopback ports, reachable from inside the sandbox's network.

The sandbox has a network namespace of its own with only a loopback, so nothing of the host is
reachable from it. The launcher forks this forwarder before it enters that namespace: the forwarder
stays in the host's network. Inside the namespace the launcher then listens on each allowed loopback
address and port (`127.0.0.1:PORT`, `[::1]:PORT`) and hands the listening sockets over (SCM_RIGHTS
on a socket pair); the forwarder accepts on them and relays each connection to the same address and
port on the host's loopback. A port not allowed has no listener in the namespace: connecting to it
is refused, as on any closed port.

The forwarder drops to the sandbox's user with no new privileges once it holds the sockets, keeps
none of the server's pipes, and dies with the launcher (parent-death signal, and the channel's end
of file). It is outside the server's cgroups, so it bounds itself: at most `MAX_CONNECTIONS`
relayed at once (a connection beyond is reset), on small thread stacks. Standard library only: the
launcher loads it by path.
"""

from __future__ import annotations

import contextlib
import ctypes
import encodings.idna  # noqa: F401  (loaded now: the sandbox's user may not read the interpreter's files)
import json
import os
import signal
import socket
import struct
import threading
from typing import Any

__all__ = ["MAX_CONNECTIONS", "hand_over", "start"]

MAX_CONNECTIONS = 64
"""Connections relayed at once; one more is reset (the forwarder is not in the server's cgroups)."""

_PR_SET_PDEATHSIG, _PR_SET_NO_NEW_PRIVS = 1, 38
_CHUNK = 65536
_CONNECT_TIMEOUT_S = 10.0
_BACKLOG = 64
_STACK_BYTES = 256 * 1024


def start(spec: dict[str, Any]) -> socket.socket:
    """Fork the forwarder (still in the host's network); the launcher's end of the channel to it."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    if os.fork() == 0:
        ours.close()
        code = 0
        try:
            _serve(spec, theirs)
        except BaseException:  # never run the launcher's code in this child
            code = 1
        os._exit(code)
    theirs.close()
    return ours


def hand_over(channel: socket.socket, allowed: list[list[Any]]) -> None:
    """In the sandbox's network: listen on each allowed [address, port], give the sockets to the forwarder."""
    listeners = []
    for address, port in allowed:
        listener = socket.socket(_family(address), socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if ":" in address:
            listener.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        try:
            listener.bind((address, port))
        except OSError as exc:
            listener.close()
            why = f"cannot listen on {address} port {port} in its network: {exc.strerror}"
            raise OSError(exc.errno, why) from exc
        listener.listen(_BACKLOG)
        listeners.append(listener)
    socket.send_fds(channel, [json.dumps(allowed).encode()], [listener.fileno() for listener in listeners])
    for listener in listeners:
        listener.close()


def _serve(spec: dict[str, Any], channel: socket.socket) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, ctypes.c_ulong(signal.SIGKILL), 0, 0, 0)
    if os.getppid() == 1:  # the launcher died before the signal was set
        return
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):  # the server's stdio pipes are not the forwarder's to hold open
        os.dup2(devnull, fd)
    message, fds, _, _ = socket.recv_fds(channel, 4096, 256)
    if not fds:
        return
    allowed = json.loads(message)
    if spec["uid"] is not None:
        os.setgroups([])
        os.setgid(spec["gid"])
        os.setuid(spec["uid"])
    libc.prctl(_PR_SET_NO_NEW_PRIVS, ctypes.c_ulong(1), 0, 0, 0)
    threading.stack_size(_STACK_BYTES)
    slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
    for fd, (address, port) in zip(fds, allowed, strict=True):
        listener = socket.socket(fileno=fd)
        target = (str(address), int(port))
        threading.Thread(target=_accept, args=(listener, target, slots), daemon=True).start()
    while channel.recv(1):  # the launcher's end closes when it exits
        pass


def _family(address: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in address else socket.AF_INET


def _accept(listener: socket.socket, target: tuple[str, int], slots: threading.BoundedSemaphore) -> None:
    while True:
        inner, _ = listener.accept()
        if not slots.acquire(blocking=False):
            _reset(inner)  # too many at once
            continue
        threading.Thread(target=_relay_in_slot, args=(inner, target, slots), daemon=True).start()


def _relay_in_slot(inner: socket.socket, target: tuple[str, int], slots: threading.BoundedSemaphore) -> None:
    try:
        _relay(inner, target)
    finally:
        slots.release()


def _reset(connection: socket.socket) -> None:
    with contextlib.suppress(OSError):
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    connection.close()


def _relay(inner: socket.socket, target: tuple[str, int]) -> None:
    outer = socket.socket(_family(target[0]), socket.SOCK_STREAM)
    outer.settimeout(_CONNECT_TIMEOUT_S)
    try:
        outer.connect(target)
    except OSError:  # nothing listens on the host's port: reset, as a refused connection would be
        outer.close()
        _reset(inner)
        return
    outer.settimeout(None)
    for end in (inner, outer):
        end.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    back = threading.Thread(target=_pump, args=(outer, inner), daemon=True)
    back.start()
    _pump(inner, outer)
    back.join()
    inner.close()
    outer.close()


def _pump(source: socket.socket, target: socket.socket) -> None:
    try:
        while data := source.recv(_CHUNK):
            target.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            target.shutdown(socket.SHUT_WR)
