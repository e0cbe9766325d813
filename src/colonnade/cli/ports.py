"""Is a TCP port free to listen on? Asked before anything starts, so a busy port costs one clear line.

Checked the way uvicorn binds (`SO_REUSEADDR`, so a port in TIME_WAIT counts as free while one with
a listener does not), before the gateway migrates its database or the demo starts its backend.
"""

from __future__ import annotations

import errno
import socket

__all__ = ["port_problem"]


def port_problem(host: str, port: int) -> str | None:
    """Why nothing can listen on `host:port` (busy, unknown address), or None when it can."""
    if not 1 <= port <= 65535:
        return f"port {port} is not one a client can reach: give a port from 1 to 65535"
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except socket.gaierror as exc:
        return f"the host {host!r} does not resolve ({exc.strerror})"
    with socket.socket(family, kind, proto) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return f"port {port} on {host} is in use (by another gateway or program)"
            return f"cannot listen on {host}:{port}: {exc.strerror or exc}"
    return None
