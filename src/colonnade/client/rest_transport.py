"""The client over the gateway's REST surface (`/v1/calls`, `/v1/approvals`, `/v1/tools`).

Every answer of `/v1/calls` is a CallResult, whatever its HTTP status (docs/rest-api.md); an answer
that is not (a 401 before the pipeline, a proxy's error page) becomes a `terminal_error` result with
the gateway's code when its body carries one, so an agent reads one shape. Every request asks for
envelope version 2 (header `Colonnade-Envelope-Version: 2`), the shape `CallResult` models; a
version 1 answer is read back into it (`calls/envelope_v1.from_v1`).
"""

from __future__ import annotations

from typing import Any

import httpx2
from pydantic import ValidationError

from colonnade.calls.envelope import ENVELOPE_VERSION_HEADER, CallError, CallRequest, CallResult, CallStatus
from colonnade.calls.envelope_v1 import CallResultV1, from_v1
from colonnade.client.client_errors import ClientError

__all__ = ["RestTransport"]


class RestTransport:
    """`RestTransport("http://127.0.0.1:8765", token=...)`; or give your own `httpx2.AsyncClient`."""

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        client: httpx2.AsyncClient | None = None,
        timeout_s: float = 60.0,
    ) -> None:
        # The agent SDK reads the full envelope (success_prep, pending): it asks for version 2.
        headers = {ENVELOPE_VERSION_HEADER: "2"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self._own = client is None
        self._client = client if client is not None else httpx2.AsyncClient(timeout=timeout_s)
        self._base = base_url.rstrip("/")
        self._headers = headers

    async def call(self, request: CallRequest) -> CallResult:
        body = request.model_dump(mode="json", exclude_none=True)
        return await self._result("POST", "/v1/calls", body, call_id=request.call_id)

    async def commit(self, commit_token: str, call_id: str | None = None) -> CallResult:
        return await self._result(
            "POST", "/v1/calls/commit", _token_body(commit_token, call_id), call_id=call_id
        )

    async def discard(self, commit_token: str, call_id: str | None = None) -> CallResult:
        return await self._result(
            "POST", "/v1/calls/discard", _token_body(commit_token, call_id), call_id=call_id
        )

    async def approval(self, approval_id: str) -> dict[str, Any]:
        answer = await self._json("GET", f"/v1/approvals/{approval_id}")
        record = answer.get("approval")
        if not isinstance(record, dict):
            raise ClientError(
                f"GET /v1/approvals/{approval_id} answered without an approval: {_error_of(answer)}"
            )
        return record

    async def resume(self, approval_id: str, call_id: str | None = None) -> CallResult:
        body = {"call_id": call_id} if call_id else {}
        answer = await self._json("POST", f"/v1/approvals/{approval_id}/resume", body)
        if "result" in answer:
            return _parse(answer["result"])
        return _refusal(answer, call_id or approval_id)

    async def tool(self, name: str) -> dict[str, Any]:
        answer = await self._json("GET", f"/v1/tools/{name}")
        if "input_schema" not in answer:
            raise ClientError(f"GET /v1/tools/{name} answered without a tool: {_error_of(answer)}")
        return answer

    async def aclose(self) -> None:
        if self._own:
            await self._client.aclose()

    async def _result(
        self, method: str, path: str, body: dict[str, Any], *, call_id: str | None
    ) -> CallResult:
        answer = await self._json(method, path, body)
        if "status" in answer and "call_id" in answer:
            return _parse(answer)
        return _refusal(answer, call_id or "")

    async def _json(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        try:
            response = await self._client.request(method, self._base + path, json=body, headers=self._headers)
        except httpx2.HTTPError as exc:
            raise ClientError(
                f"{method} {path}: no answer from the gateway ({type(exc).__name__}: {exc})"
            ) from exc
        try:
            answer = response.json()
        except ValueError as exc:
            raise ClientError(f"{method} {path}: HTTP {response.status_code} without JSON") from exc
        if not isinstance(answer, dict):
            raise ClientError(
                f"{method} {path}: HTTP {response.status_code} answered {type(answer).__name__}"
            )
        return answer


def _token_body(commit_token: str, call_id: str | None) -> dict[str, Any]:
    return {"commit_token": commit_token, **({"call_id": call_id} if call_id else {})}


def _parse(payload: Any) -> CallResult:
    """A CallResult of either envelope version (one in version 1 when something on the way dropped
    the header that asks for version 2)."""
    try:
        if isinstance(payload, dict) and payload.get("envelope_version") == 1:
            return from_v1(CallResultV1.model_validate(payload))
        return CallResult.model_validate(payload)
    except ValidationError as exc:
        raise ClientError(f"the gateway's answer is not a CallResult: {exc.errors()[:3]}") from exc


def _refusal(answer: dict[str, Any], call_id: str) -> CallResult:
    """An error body (`{"error": {code, message, details, fix}}`) as a terminal result."""
    error = answer.get("error")
    if not isinstance(error, dict) or "code" not in error:
        raise ClientError(f"the gateway answered neither a CallResult nor an error: {str(answer)[:200]}")
    typed = CallError(
        code=str(error["code"]),
        message=str(error.get("message", "")),
        details=dict(error.get("details") or {}),
        fix=str(error.get("fix", "")),
    )
    return CallResult(call_id=call_id, status=CallStatus.TERMINAL_ERROR, error=typed)


def _error_of(answer: dict[str, Any]) -> str:
    error = answer.get("error")
    if isinstance(error, dict):
        return f"{error.get('code')}: {error.get('message')}"
    return str(answer)[:200]
