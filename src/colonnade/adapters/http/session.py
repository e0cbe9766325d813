"""The aiohttp session of one backend origin: its connection pool, TLS and request defaults.

Every session of the process shares one TLS context (loading the CA bundle costs about 20 ms and
contexts are shareable). Sessions keep no cookies, so no backend cookie set during one principal's
call is ever sent with another's, and take no timeouts of their own: the adapter bounds each call.
"""

from __future__ import annotations

import os
import ssl
from functools import lru_cache

import aiohttp

__all__ = ["new_session", "tls_context"]


def new_session(
    *, max_connections: int, keepalive_s: float, trust_env: bool, user_agent: str
) -> aiohttp.ClientSession:
    """A session whose pool holds up to `max_connections`, idle ones for `keepalive_s` seconds.

    `trust_env` honours the proxy variables (HTTP(S)_PROXY, NO_PROXY) and SSL_CERT_FILE/_DIR.
    Needs a running event loop.
    """
    connector = aiohttp.TCPConnector(
        limit=max_connections,
        keepalive_timeout=keepalive_s,
        ssl=tls_context(trust_env),
    )
    return aiohttp.ClientSession(
        connector=connector,
        timeout=aiohttp.ClientTimeout(),
        cookie_jar=aiohttp.DummyCookieJar(),
        headers={"User-Agent": user_agent},
        skip_auto_headers=("Content-Type",),  # the request sets it when it has a body
        trust_env=trust_env,
    )


@lru_cache(maxsize=2)
def tls_context(trust_env: bool) -> ssl.SSLContext:
    """The process's TLS context: the system's CA certificates; SSL_CERT_FILE/_DIR only on `trust_env`."""
    if trust_env:
        return ssl.create_default_context()  # OpenSSL reads SSL_CERT_FILE and SSL_CERT_DIR
    paths = ssl.get_default_verify_paths()  # the compiled-in locations, not the environment's
    cafile = paths.openssl_cafile if os.path.isfile(paths.openssl_cafile) else None
    capath = paths.openssl_capath if os.path.isdir(paths.openssl_capath) else None
    if cafile is None and capath is None:
        return ssl.create_default_context()
    return ssl.create_default_context(cafile=cafile, capath=capath)
