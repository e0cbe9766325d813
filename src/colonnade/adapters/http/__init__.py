"""Contract backends over HTTP: the `http` kind of the adapter registry, in one room.

`tools` adapts an `Invocation` to `adapter`, which sends it over the pooled aiohttp session of
`session`: the request is built by `request` (and `form` for form bodies), the answer read by
`body`, `response` and `checksum`.
"""

from colonnade.adapters.http.adapter import HttpAdapter
from colonnade.adapters.http.tools import HttpTools

__all__ = ["HttpAdapter", "HttpTools"]
