"""Classify what a backend answered (or how it failed) into an AdapterOutcome.

Only connection-level failures, timeouts and 408/429/502/503/504 are retryable: the adapter
does not know whether the operation is idempotent, so a 500 (the backend may have acted) is
terminal and the pipeline's retry policy decides the rest.

Messages reach clients (REST and MCP answers), so they say what failed and never where the
backend lives: no origin, host, port or URL (a redirect's target included). The adapter logs
those for operators (`where_to_log`).
"""

from __future__ import annotations

import json
import socket
import ssl
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import aiohttp
from aiohttp.http_exceptions import ContentEncodingError, HttpProcessingError

from colonnade.adapters.http.checksum import digest_problem
from colonnade.adapters.outcome import (
    AUTH_REFUSED,
    CHECKSUM,
    CONFLICT,
    MALFORMED,
    MISCONFIGURED,
    NOT_FOUND,
    RATE_LIMITED,
    REJECTED,
    SERVER_FAULT,
    TIMEOUT,
    UNAVAILABLE,
    UNREACHABLE,
    AdapterOutcome,
    OutcomeKind,
)

__all__ = [
    "BackendAnswer",
    "backend_message",
    "outcome_from_exception",
    "outcome_from_response",
    "redirect_target",
    "retry_after_ms",
]

_RETRYABLE_STATUS = {
    408: UNAVAILABLE,
    429: RATE_LIMITED,
    502: UNAVAILABLE,
    503: UNAVAILABLE,
    504: UNAVAILABLE,
}
_CLIENT_STATUS = {
    401: AUTH_REFUSED,
    403: AUTH_REFUSED,
    404: NOT_FOUND,
    410: NOT_FOUND,
    409: CONFLICT,
    412: CONFLICT,
    428: CONFLICT,
}
_MESSAGE_KEYS = ("message", "detail", "error_description", "error", "title", "msg")
_MESSAGE_LIMIT = 500
# the words of the gateway's earlier HTTP clients for a refused or unreachable backend: the message
# is part of the REST and MCP answers, so it stays as clients have seen it
_CONNECT_FAILED = "All connection attempts failed"


@dataclass(frozen=True, slots=True)
class BackendAnswer:
    """A complete answer as read off the wire, in the terms the mapping needs (no client's types).

    `headers` look names up case-insensitively; `charset` is the Content-Type's, when it names one.
    """

    status: int
    reason: str
    headers: Mapping[str, str]
    charset: str | None = None


def outcome_from_response(response: BackendAnswer, content: bytes, duration_ms: float) -> AdapterOutcome:
    """Map a complete answer: 2xx success, listed statuses retryable, everything else terminal."""
    status = response.status
    declared_json = _is_json(response.headers.get("content-type", ""))
    try:
        body = _parse(response, content, declared_json)
    except ValueError as exc:
        if 200 <= status < 300:
            return AdapterOutcome(
                OutcomeKind.TERMINAL_ERROR,
                status_code=status,
                body=_text(response, content),
                error_code=MALFORMED,
                message=f"the backend declared JSON but sent a body that is not valid JSON ({exc})",
                duration_ms=duration_ms,
            )
        body = _text(response, content)
    if 200 <= status < 300:
        problem = digest_problem(response.headers, content)
        if problem is not None:
            return AdapterOutcome(
                OutcomeKind.TERMINAL_ERROR,
                status_code=status,
                error_code=CHECKSUM,
                message=problem,
                duration_ms=duration_ms,
            )
        return AdapterOutcome(OutcomeKind.SUCCESS, status_code=status, body=body, duration_ms=duration_ms)
    retryable_code = _RETRYABLE_STATUS.get(status)
    return AdapterOutcome(
        OutcomeKind.TERMINAL_ERROR if retryable_code is None else OutcomeKind.RETRYABLE_ERROR,
        status_code=status,
        body=body,
        error_code=retryable_code or _terminal_code(status),
        message=_error_message(response, body),
        retry_after_ms=None
        if retryable_code is None
        else retry_after_ms(response.headers.get("retry-after")),
        duration_ms=duration_ms,
    )


def outcome_from_exception(
    exc: BaseException, origin: str, timeout_s: float, duration_ms: float
) -> AdapterOutcome:
    """Map a failure without a complete answer; the message never names the backend's address.

    `origin` is only used to scrub the address out of the HTTP stack's own words.
    """
    code, message = _failure(exc, timeout_s)
    message = _scrubbed(message, origin)
    retryable = code in (TIMEOUT, UNREACHABLE)
    return AdapterOutcome(
        OutcomeKind.RETRYABLE_ERROR if retryable else OutcomeKind.TERMINAL_ERROR,
        error_code=code,
        message=message,
        duration_ms=duration_ms,
    )


def retry_after_ms(value: str | None, now: datetime | None = None) -> int | None:
    """`Retry-After` as milliseconds from now: delay-seconds or an HTTP-date; None when unusable."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        return _until_date(text, now)
    return round(seconds * 1000) if seconds >= 0 else None


def backend_message(body: Any) -> str | None:
    """The backend's own words: a message/detail/error field (nested too), or a plain-text body."""
    if isinstance(body, str):
        return _clip(body.strip()) or None
    if isinstance(body, dict):
        for key in _MESSAGE_KEYS:
            found = backend_message(body.get(key))
            if found:
                return found
        return None
    if isinstance(body, list):
        return _clip("; ".join(m for item in body[:5] if (m := backend_message(item)))) or None
    return None


def _until_date(text: str, now: datetime | None) -> int | None:
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    delta = when - (now or datetime.now(UTC))
    return max(0, round(delta.total_seconds() * 1000))


def _terminal_code(status: int) -> str:
    if status >= 500:
        return SERVER_FAULT
    if status >= 400:
        return _CLIENT_STATUS.get(status, REJECTED)
    return MISCONFIGURED


def redirect_target(response: BackendAnswer) -> str | None:
    """Where a 3xx answer points (for the operator's log; never part of a message)."""
    if 300 <= response.status < 400:
        return response.headers.get("location")
    return None


def _error_message(response: BackendAnswer, body: Any) -> str:
    status = response.status
    if 300 <= status < 400:
        return (
            f"the backend redirected ({status}); point the contract's base_url (or the endpoint's "
            "backend_url) at the address it redirects to, which the gateway's log names"
        )
    media = response.headers.get("content-type", "").split(";")[0].strip().lower()
    own = None if media == "text/html" else backend_message(body)
    return own or f"the backend answered {status} {response.reason}".rstrip()


def _failure(exc: BaseException, timeout_s: float) -> tuple[str, str]:
    if isinstance(exc, TimeoutError):
        return TIMEOUT, f"no answer from the backend within {timeout_s:g} s"
    if isinstance(exc, aiohttp.ClientConnectorError):
        return _connect_failure(exc)
    if isinstance(exc, aiohttp.InvalidURL | aiohttp.NonHttpUrlClientError | ValueError):
        return MISCONFIGURED, (
            f"the backend URL is not usable ({type(exc).__name__}); fix the contract's backend.base_url"
        )
    if isinstance(exc, aiohttp.ClientPayloadError):
        if any(isinstance(cause, ContentEncodingError) for cause in _chain(exc)):
            return MALFORMED, f"the backend's body cannot be decoded: {_reason(exc)}"
        return UNREACHABLE, _closed_early(exc)
    if isinstance(exc, HttpProcessingError | aiohttp.ClientResponseError):  # the parser's, as raised
        return UNREACHABLE, f"the backend sent a malformed HTTP answer ({_first_line(exc)})"
    if isinstance(exc, aiohttp.ClientConnectionError):
        return UNREACHABLE, _closed_early(exc)
    return MISCONFIGURED, f"the request to the backend could not be sent: {_reason(exc)}"


def _closed_early(exc: BaseException) -> str:
    return f"the connection to the backend was closed before a complete answer ({_reason(exc)})"


def _connect_failure(exc: aiohttp.ClientConnectorError) -> tuple[str, str]:
    for cause in (exc.os_error, *_chain(exc)):
        if isinstance(cause, ssl.SSLError):
            reason = cause.reason or _reason(cause)
            return MISCONFIGURED, f"TLS with the backend failed ({reason}); check the backend's TLS set-up"
        if isinstance(cause, socket.gaierror):
            return UNREACHABLE, f"the backend's host name cannot be resolved ({cause.strerror})"
    return UNREACHABLE, f"cannot connect to the backend ({_CONNECT_FAILED})"


def _scrubbed(message: str, origin: str) -> str:
    """The message without the backend's address, should the HTTP stack's words carry it."""
    address = origin.split("://", 1)[-1]
    host = address.rsplit(":", 1)[0].strip("[]")
    for text in (origin, address, host):
        if text:
            message = message.replace(text, "the backend")
    return message


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """The exception and what caused it, through the HTTP stack's re-raises."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _reason(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


def _first_line(exc: HttpProcessingError | aiohttp.ClientResponseError) -> str:
    """The parser's complaint without the echo of the offending bytes it appends."""
    return (exc.message or type(exc).__name__).splitlines()[0]


def _is_json(content_type: str) -> bool:
    media = content_type.split(";")[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


def _parse(response: BackendAnswer, content: bytes, declared_json: bool) -> Any:
    """Strict JSON: NaN/Infinity and lone surrogates are not JSON any client can take (ValueError)."""
    if not content:
        return None
    if not declared_json:
        return _text(response, content)
    body = json.loads(content, parse_constant=_not_json)
    if b"\\ud" in content.lower():  # a surrogate escape: fine in a pair, not alone
        json.dumps(body, ensure_ascii=False).encode("utf-8")  # raises UnicodeEncodeError when alone
    return body


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not a JSON value")


def _text(response: BackendAnswer, content: bytes) -> str | None:
    if not content:
        return None
    try:
        return content.decode(response.charset or "utf-8", errors="replace")
    except LookupError:
        return content.decode("utf-8", errors="replace")


def _clip(text: str) -> str:
    return text if len(text) <= _MESSAGE_LIMIT else text[: _MESSAGE_LIMIT - 1] + "…"
