"""Execute contract operations against their HTTP backends, one pooled client per backend origin.

A client (keep-alive pool; one TLS context shared by every client of the process) is created
the first time an origin is called and reused for every later call. Each call gets one overall
timeout covering pool wait, connect, send and read, so a backend that trickles bytes cannot hold
a call past it. The adapter reports what happened (AdapterOutcome); retries, idempotency and policy
belong to the call pipeline.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import Mapping
from dataclasses import replace
from functools import lru_cache
from types import TracebackType
from typing import Any, Self

import httpx2

from colonnade import __version__
from colonnade.adapters.http_request import RequestBuildError, RequestParts, auth_headers, request_parts
from colonnade.adapters.http_response import outcome_from_exception, outcome_from_response
from colonnade.adapters.http_transport import ColonnadeTransport
from colonnade.adapters.outcome import MALFORMED, AdapterOutcome, OutcomeKind
from colonnade.adapters.secrets import EnvSecretResolver, SecretResolver
from colonnade.catalog.http_binding import HttpBinding

__all__ = ["DEFAULT_LIMITS", "DEFAULT_MAX_RESPONSE_BYTES", "DEFAULT_TIMEOUT_S", "HttpAdapter"]

DEFAULT_TIMEOUT_S = 30.0
DEFAULT_MAX_RESPONSE_BYTES = 10 * 1024 * 1024
# Per origin: enough parallel calls for a busy gateway, idle connections kept warm for 30 s.
DEFAULT_LIMITS = httpx2.Limits(max_connections=100, max_keepalive_connections=20, keepalive_expiry=30.0)
_USER_AGENT = f"colonnade/{__version__}"


class _ResponseTooLarge(Exception):
    def __init__(self, status_code: int) -> None:
        super().__init__(status_code)
        self.status_code = status_code


class HttpAdapter:
    """Runs one HttpBinding per call; create one per process and `aclose()` it on shutdown.

    Timeout precedence: the call's `timeout_s` (the pipeline's remaining deadline), else the
    binding's `timeout_ms`, else `default_timeout_s`. A timeout of zero or less ends the call
    at once with `R-TIMEOUT-001`. `trust_env` honours HTTP(S)_PROXY / NO_PROXY / SSL_CERT_FILE;
    it is off by default so backend traffic goes exactly where the contract says.
    """

    def __init__(
        self,
        *,
        secrets: SecretResolver | None = None,
        limits: httpx2.Limits = DEFAULT_LIMITS,
        default_timeout_s: float = DEFAULT_TIMEOUT_S,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        trust_env: bool = False,
    ) -> None:
        self._secrets: SecretResolver = secrets if secrets is not None else EnvSecretResolver()
        self._limits = limits
        self._default_timeout_s = default_timeout_s
        self._max_response_bytes = max_response_bytes
        self._trust_env = trust_env
        self._clients: dict[str, httpx2.AsyncClient] = {}
        self._closed = False

    @property
    def origins(self) -> tuple[str, ...]:
        """The backend origins that have a client, in the order they were first called."""
        return tuple(self._clients)

    def client_for(self, base_url: str) -> httpx2.AsyncClient:
        """The pooled client of the base URL's origin, created on first use."""
        if self._closed:
            raise RuntimeError("this HttpAdapter is closed; create a new one")
        origin = _origin(base_url)
        client = self._clients.get(origin)
        if client is None:
            context = _ssl_context(self._trust_env)
            # httpx2's own transport only where it must read proxy settings from the environment
            transport = (
                None if self._trust_env else ColonnadeTransport(ssl_context=context, limits=self._limits)
            )
            client = httpx2.AsyncClient(
                transport=transport,
                limits=self._limits,
                verify=context,
                trust_env=self._trust_env,
                follow_redirects=False,
                headers={"user-agent": _USER_AGENT},
            )
            self._clients[origin] = client
        return client

    async def execute(
        self,
        binding: HttpBinding,
        arguments: dict[str, Any],
        *,
        timeout_s: float | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> AdapterOutcome:
        """Send the operation's request and classify the answer; never raises for backend trouble.

        `headers` are added as given (e.g. the call's `Idempotency-Key`); arguments mapped to
        headers and the backend credential take precedence over them.
        """
        started = time.perf_counter()
        timeout = self._timeout_for(binding, timeout_s)
        try:
            origin = _origin(binding.base_url)
            parts = request_parts(binding, arguments)
            if headers:
                extra = {name.lower(): value for name, value in headers.items()}
                parts = replace(parts, headers=extra | parts.headers)
            if binding.auth is not None:
                parts = replace(
                    parts, headers=parts.headers | await auth_headers(binding.auth, self._secrets)
                )
        except RequestBuildError as exc:
            return AdapterOutcome(
                OutcomeKind.TERMINAL_ERROR,
                error_code=exc.code,
                message=exc.message,
                duration_ms=_since(started),
            )
        except httpx2.InvalidURL as exc:
            return outcome_from_exception(exc, binding.base_url, timeout, _since(started))
        try:
            response, content = await self._exchange(self.client_for(binding.base_url), parts, timeout)
        except _ResponseTooLarge as exc:
            return AdapterOutcome(
                OutcomeKind.TERMINAL_ERROR,
                exc.status_code,
                error_code=MALFORMED,
                message=f"the answer from {origin} exceeds the limit of {self._max_response_bytes} bytes",
                duration_ms=_since(started),
            )
        except (TimeoutError, httpx2.HTTPError, httpx2.InvalidURL) as exc:
            return outcome_from_exception(exc, origin, timeout, _since(started))
        return outcome_from_response(response, content, _since(started))

    async def _exchange(
        self, client: httpx2.AsyncClient, parts: RequestParts, budget_s: float
    ) -> tuple[httpx2.Response, bytes]:
        """One request and its whole body under one overall timeout (pool wait, connect, send, read)."""
        if budget_s <= 0:
            raise TimeoutError
        async with asyncio.timeout(budget_s):
            request = client.build_request(
                parts.method,
                parts.url,
                params=parts.query or None,
                headers=parts.headers,
                content=parts.content,
                timeout=httpx2.Timeout(budget_s),
            )
            response = await client.send(request, stream=True)
            try:
                return response, await _read_capped(response, self._max_response_bytes)
            finally:
                await response.aclose()

    async def aclose(self) -> None:
        """Close every pooled connection; the adapter cannot be used afterwards."""
        self._closed = True
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    def _timeout_for(self, binding: HttpBinding, timeout_s: float | None) -> float:
        if timeout_s is not None:
            return timeout_s
        if binding.timeout_ms is not None:
            return binding.timeout_ms / 1000
        return self._default_timeout_s


async def _read_capped(response: httpx2.Response, limit: int) -> bytes:
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise _ResponseTooLarge(response.status_code)
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            raise _ResponseTooLarge(response.status_code)
        chunks.append(chunk)
    return b"".join(chunks)


@lru_cache(maxsize=2)
def _ssl_context(trust_env: bool) -> ssl.SSLContext:
    """One TLS context per process: loading the CA bundle costs ~20 ms, and contexts are shareable."""
    return httpx2.create_ssl_context(trust_env=trust_env)


@lru_cache(maxsize=1024)
def _origin(base_url: str) -> str:
    """scheme://host:port, lower-cased: calls to one origin share a pool whatever their base path."""
    url = httpx2.URL(base_url)
    host = f"[{url.host}]" if ":" in url.host else url.host
    port = url.port or (443 if url.scheme == "https" else 80)
    return f"{url.scheme}://{host}:{port}".lower()


def _since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)
