"""Read a backend's answer body whole, but never more of it than the adapter's size limit.

The limit applies to the body as decoded (aiohttp undoes gzip/deflate as it reads), so a small
compressed answer cannot unpack into more memory than the limit allows.
"""

from __future__ import annotations

import aiohttp

__all__ = ["ResponseTooLarge", "read_capped"]

_IDENTITY = ("", "identity")


class ResponseTooLarge(Exception):
    """The body is over the limit; `status_code` is the answer's status."""

    def __init__(self, status_code: int) -> None:
        super().__init__(status_code)
        self.status_code = status_code


async def read_capped(response: aiohttp.ClientResponse, limit: int) -> bytes:
    """The whole body; ResponseTooLarge as soon as it is known to be over `limit` bytes."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit():
        if int(declared) > limit:
            raise ResponseTooLarge(response.status)
        if response.headers.get("content-encoding", "").strip().lower() in _IDENTITY:
            return await response.read()  # its length is known and within the limit
    chunks: list[bytes] = []
    size = 0
    stream = response.content
    while chunk := await stream.readany():
        size += len(chunk)
        if size > limit:
            raise ResponseTooLarge(response.status)
        chunks.append(chunk)
    return b"".join(chunks)
