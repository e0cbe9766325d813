"""Execute contract operations against their HTTP backends, one pooled aiohttp session per origin.

A session (keep-alive pool; one TLS context shared by the process) is created the first time an
origin is called and reused for every later call, so one slow backend can hold only its own
connections. Each call gets one overall timeout covering pool wait, connect, send and read, so a
backend that trickles bytes cannot hold a call past it. The adapter reports what happened
(AdapterOutcome); retries, idempotency and policy belong to the call pipeline. Outcome messages
reach clients and never name the backend's address; a failure's origin (and a redirect's target)
goes to the log, where the call's trace_id is bound.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from dataclasses import replace
from types import TracebackType
from typing import Any, Self

import aiohttp
from aiohttp.http_exceptions import HttpProcessingError

from colonnade import __version__
from colonnade.adapters.credentials.grant import UpstreamGrant
from colonnade.adapters.http.body import ResponseTooLarge, read_capped
from colonnade.adapters.http.request import (
    RequestBuildError,
    RequestParts,
    auth_headers,
    backend_base,
    caller_headers,
    request_parts,
)
from colonnade.adapters.http.response import (
    BackendAnswer,
    outcome_from_exception,
    outcome_from_response,
    redirect_target,
)
from colonnade.adapters.http.session import new_session
from colonnade.adapters.outcome import MALFORMED, MISCONFIGURED, AdapterOutcome, OutcomeKind
from colonnade.adapters.secrets import EnvSecretResolver, SecretResolver
from colonnade.catalog.http_binding import HttpBinding
from colonnade.contracts.model import BackendAuth

__all__ = [
    "DEFAULT_KEEPALIVE_S",
    "DEFAULT_MAX_CONNECTIONS",
    "DEFAULT_MAX_RESPONSE_BYTES",
    "DEFAULT_TIMEOUT_S",
    "HttpAdapter",
]

logger = logging.getLogger("colonnade.adapters.http")  # the room's name, as log lines have always said

DEFAULT_TIMEOUT_S = 30.0
DEFAULT_MAX_RESPONSE_BYTES = 10 * 1024 * 1024
# Per origin: enough parallel calls for a busy gateway; idle connections kept warm for 30 s.
DEFAULT_MAX_CONNECTIONS = 100
DEFAULT_KEEPALIVE_S = 30.0
_USER_AGENT = f"colonnade/{__version__}"
# RFC 9110 9.2.2; aiohttp sends these once more by itself when a connection fails under them
_IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"})


class _AdapterClosed(aiohttp.ClientConnectionError):
    """`aclose()` ran while the call was in flight: whatever it read is not a complete answer."""


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
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
        keepalive_s: float = DEFAULT_KEEPALIVE_S,
        default_timeout_s: float = DEFAULT_TIMEOUT_S,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        trust_env: bool = False,
    ) -> None:
        self._secrets: SecretResolver = secrets if secrets is not None else EnvSecretResolver()
        self._max_connections = max_connections
        self._keepalive_s = keepalive_s
        self._default_timeout_s = default_timeout_s
        self._max_response_bytes = max_response_bytes
        self._trust_env = trust_env
        self._sessions: dict[str, aiohttp.ClientSession] = {}
        self._in_flight: set[asyncio.Task[Any]] = set()
        self._stopped: set[asyncio.Task[Any]] = set()  # calls `aclose()` cancelled
        self._closed = False

    @property
    def origins(self) -> tuple[str, ...]:
        """The backend origins that have a session, in the order they were first called."""
        return tuple(self._sessions)

    def session_for(self, base_url: str) -> aiohttp.ClientSession:
        """The pooled session of the base URL's origin, created on first use."""
        if self._closed:
            raise RuntimeError("this HttpAdapter is closed; create a new one")
        origin = backend_base(base_url).origin
        session = self._sessions.get(origin)
        if session is None:
            session = new_session(
                max_connections=self._max_connections,
                keepalive_s=self._keepalive_s,
                trust_env=self._trust_env,
                user_agent=_USER_AGENT,
            )
            self._sessions[origin] = session
        return session

    async def execute(
        self,
        binding: HttpBinding,
        arguments: dict[str, Any],
        *,
        timeout_s: float | None = None,
        headers: Mapping[str, str] | None = None,
        deduplicated: bool = False,
        grant: UpstreamGrant | None = None,
    ) -> AdapterOutcome:
        """Send the operation's request and classify the answer; never raises for backend trouble.

        `headers` are added as given (e.g. the call's `Idempotency-Key`), less those the HTTP
        client manages (`Connection`, `Content-Length`, ...); arguments mapped to headers and the
        backend credential take precedence over them. `deduplicated` says that the backend runs a
        request at most once per `Idempotency-Key` (the contract's word, never assumed). `grant` is
        the caller's upstream credential when the backend's mode is forward or exchange.
        """
        started = time.perf_counter()
        timeout = self._timeout_for(binding, timeout_s)
        try:
            parts = request_parts(binding, arguments)
            if headers:
                parts = replace(parts, headers=caller_headers(headers) | parts.headers)
            if grant is not None:
                parts = replace(parts, headers=parts.headers | grant.header())
            elif isinstance(binding.auth, BackendAuth):
                parts = replace(
                    parts,
                    headers=parts.headers
                    | await auth_headers(binding.auth, self._secrets, tenant=binding.tenant),
                )
        except RequestBuildError as exc:
            if exc.code == MISCONFIGURED:
                logger.warning("request to backend %s not built: %s", binding.base_url, exc.message)
            return AdapterOutcome(
                OutcomeKind.TERMINAL_ERROR,
                error_code=exc.code,
                message=exc.message,
                duration_ms=_since(started),
            )
        origin = backend_base(binding.base_url).origin
        task = asyncio.current_task()
        if task is not None:
            self._in_flight.add(task)
        try:
            session = self.session_for(binding.base_url)
            answer, content = await self._exchange(session, parts, timeout, deduplicated)
        except ResponseTooLarge as exc:
            logger.warning("backend %s: answer over %d bytes", origin, self._max_response_bytes)
            return AdapterOutcome(
                OutcomeKind.TERMINAL_ERROR,
                exc.status_code,
                error_code=MALFORMED,
                message=f"the backend's answer exceeds the limit of {self._max_response_bytes} bytes",
                duration_ms=_since(started),
            )
        except asyncio.CancelledError:
            if not self._stopped_by_close(task):
                raise
            closed = _AdapterClosed("the adapter was closed")
            return _failed(closed, origin, timeout, _since(started))
        except (TimeoutError, aiohttp.ClientError, HttpProcessingError) as exc:
            return _failed(exc, origin, timeout, _since(started))
        finally:
            self._in_flight.discard(task)
        target = redirect_target(answer)
        if target is not None:
            logger.warning("backend %s redirected (%d) to %s", origin, answer.status, target)
        outcome = outcome_from_response(answer, content, _since(started))
        return outcome if grant is None else replace(outcome, credential=grant.audit())

    def _stopped_by_close(self, task: asyncio.Task[Any] | None) -> bool:
        """Whether a CancelledError came from `aclose()` alone (then the call fails, its task goes on)."""
        if not self._closed or task is None:
            return False
        if task in self._stopped:
            self._stopped.discard(task)
            return task.uncancel() == 0
        return task.cancelling() == 0  # aiohttp cancelled its wait for a pooled connection

    async def _exchange(
        self, session: aiohttp.ClientSession, parts: RequestParts, budget_s: float, deduplicated: bool
    ) -> tuple[BackendAnswer, bytes]:
        """One request and its whole body under one overall timeout (pool wait, connect, send, read)."""
        if budget_s <= 0:
            raise TimeoutError
        async with asyncio.timeout(budget_s):
            response = await self._send(session, parts, deduplicated)
            try:
                content = await read_capped(response, self._max_response_bytes)
            except BaseException:
                response.close()
                raise
            response.release()
        if self._closed:  # the connection was closed under the body: its end is not the body's end
            raise _AdapterClosed("the adapter was closed while the answer was read")
        answer = BackendAnswer(response.status, response.reason or "", response.headers, response.charset)
        return answer, content

    async def _send(
        self, session: aiohttp.ClientSession, parts: RequestParts, deduplicated: bool
    ) -> aiohttp.ClientResponse:
        """Send the request and read its head.

        When the connection fails before an answer (typically a kept-alive one the server closed
        as the request went out), aiohttp itself sends an idempotent method once more (RFC 9112
        9.3.1) and any other method never; a request carrying an `Idempotency-Key` gets that one
        second attempt here only when the backend deduplicates on it, so it will not repeat its
        effect (a backend that ignores the key may have acted on the first request).
        """
        keyed = "idempotency-key" in parts.headers
        resend = parts.method not in _IDEMPOTENT_METHODS and keyed and deduplicated
        while True:
            data, headers = _body_of(parts)
            try:
                return await session.request(
                    parts.method, parts.url, headers=headers, data=data, allow_redirects=False
                )
            except aiohttp.ClientConnectorError:
                raise
            except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError):
                if not resend or self._closed:
                    raise
                resend = False

    async def aclose(self) -> None:
        """Fail the calls in flight, close every pooled connection; the adapter cannot be used afterwards.

        A call in flight ends with `R-UPSTREAM-CONNECT` wherever it was (waiting for a connection,
        connecting, sending, reading): it is not sent again and no connection is opened for it.
        """
        self._closed = True
        current = asyncio.current_task()
        for task in self._in_flight - {current}:
            self._stopped.add(task)
            task.cancel()
        self._in_flight.clear()
        sessions, self._sessions = list(self._sessions.values()), {}
        for session in sessions:
            await session.close()

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


def _body_of(parts: RequestParts) -> tuple[bytes | aiohttp.Payload | None, dict[str, str]]:
    """The body to send and its headers; a multipart body is built afresh for each send (aiohttp
    consumes it), and its Content-Type names its boundary (the sessions set no Content-Type)."""
    if parts.form is None:
        return parts.content, parts.headers
    form = aiohttp.FormData(default_to_multipart=True)
    for part in parts.form:
        form.add_field(part.name, part.value, content_type=part.content_type, filename=part.filename)
    payload = form()
    return payload, {**parts.headers, "content-type": payload.content_type}


def _failed(exc: BaseException, origin: str, timeout_s: float, duration_ms: float) -> AdapterOutcome:
    """The outcome of a failure without an answer; the log names the backend, the message does not."""
    outcome = outcome_from_exception(exc, origin, timeout_s, duration_ms)
    logger.warning("backend %s: %s (%s)", origin, outcome.message, type(exc).__name__)
    return outcome


def _since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)
