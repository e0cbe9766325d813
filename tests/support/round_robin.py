"""A client-side round-robin balancer for tests: every HTTP request goes to the next replica.

The SDK client takes an `httpx2.AsyncClient`; with this transport each of its requests (every POST,
the GET stream, the DELETE) lands on the next replica in turn, with no stickiness, as behind
HAProxy's `balance roundrobin`. Like HAProxy with `retries` and `option redispatch`, a request
whose connection is refused (a stopped replica: nothing was sent) goes to the next replica; a
request that was sent is never sent again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import httpx2

__all__ = ["RoundRobin"]


class RoundRobin(httpx2.AsyncBaseTransport):
    def __init__(self, bases: Sequence[str]) -> None:
        if not bases:
            raise ValueError("RoundRobin needs at least one base URL")
        self.bases = [httpx2.URL(base) for base in bases]
        self._next = 0
        self._inner = httpx2.AsyncHTTPTransport()
        self.sent: Counter[str] = Counter()
        """Requests each replica answered, by base URL."""
        self.refused = 0
        """Requests redispatched because a replica refused the connection."""

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        last: httpx2.ConnectError | None = None
        for _ in range(len(self.bases)):
            base = self.bases[self._next % len(self.bases)]
            self._next += 1
            request.url = request.url.copy_with(scheme=base.scheme, host=base.host, port=base.port)
            try:
                response = await self._inner.handle_async_request(request)
            except httpx2.ConnectError as exc:
                self.refused += 1
                last = exc
                continue
            self.sent[str(base)] += 1
            return response
        assert last is not None
        raise last

    async def aclose(self) -> None:
        await self._inner.aclose()
