"""The floor of an MCP gateway on this stack: a bare forwarder of MCP requests to one upstream server.

The ASGI app of `bench/gateway_floor.py` (uvicorn, httptools, uvloop; one pooled aiohttp session
out), serving `/mcp` as a drop-in for one upstream Streamable HTTP server: a `tools/call` is parsed,
sent upstream as a new JSON-RPC request under the caller's id (with the headers the 2026-07-28 era
needs: protocol version, `Mcp-Method`, `Mcp-Name`; and the client's session id in the handshake
era), and the upstream's answer is parsed and written back. Everything else (`server/discover`,
`initialize`, listings, notifications, the handshake era's `GET` stream and `DELETE`) is relayed
as it came. No pipeline, no validation, no logging, no trace context: the CPU it spends per call is
what any MCP gateway built from these parts pays before it guarantees anything.

With `--guarantees`, it adds only what a guarantee mandates per `tools/call`, with the gateway's
own code, as `gateway_floor.py` does for contract calls:
- `audit`: the call's audit record (principal, tool, keyed hash of the arguments, decision,
  outcome and code from the answer, trace and call ids) appended with `AuditLog.append` to the
  gateway's store under `--data-dir` (migrated, hash-chained), committed before the answer;
- `envelope`: the typed `CallRequest` built from the params, a `CallResult` from the answer, and
  the answer rendered as the MCP surface renders a proxied one (`render_answer`: the server's
  content, the envelope in `_meta`);
- `auth`: the HTTP edge's authentication of the bearer token (the development issuer under
  `--data-dir`); the benchmark's gateway runs without authentication, so `federation_overhead.py
  --floor` leaves it out.

Run alone: .venv/bin/python bench/mcp_floor.py --port 8900 --upstream http://127.0.0.1:8901/mcp
           [--guarantees audit,envelope --data-dir /tmp/floor]
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from colonnade.calls.envelope import CallMetrics, CallRequest, CallResult, CallStatus, Provenance
from colonnade.governance.audit import AuditEvent, EventKind
from colonnade.governance.authorization import ALLOWED
from colonnade.governance.principal import ANONYMOUS_LOOPBACK, Principal
from colonnade.surfaces.mcp.render import render_answer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gateway_floor import Floor, _answer, _headers, floor_main

SERVER = "echo"
TENANT = "default"
_PASSED = ("mcp-protocol-version", "mcp-session-id", "mcp-method", "mcp-name", "last-event-id")
_ANSWERED = ("content-type", "mcp-session-id")


class McpFloor(Floor):
    """`Floor`'s lifespan and guarantees; its calls go to an MCP server instead of the demo backend."""

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        if scope["path"] != "/mcp":  # the probes
            await _answer(send, b"{}")
            return
        principal = ANONYMOUS_LOOPBACK
        if self.authenticate is not None:
            outcome = await self.authenticate(_headers(scope), scope)
            if not isinstance(outcome, Principal):
                await _answer(send, json.dumps({"error": outcome.code}).encode(), 401)
                return
            principal = outcome
        headers = {key.decode(): value.decode() for key, value in scope["headers"] if key.decode() in _PASSED}
        request = json.loads(body) if scope["method"] == "POST" and body else None
        if isinstance(request, dict) and request.get("method") == "tools/call":
            await self._call(request, headers, principal, send)
            return
        await self._relay(scope["method"], body, headers, send)

    async def _call(
        self, request: dict[str, Any], headers: dict[str, str], principal: Principal, send: Any
    ) -> None:
        started = time.perf_counter()
        params = request.get("params") or {}
        envelope = None
        if "envelope" in self.guarantees:
            envelope = CallRequest(tool_id=str(params.get("name")), input=params.get("arguments") or {})
        sent = {"jsonrpc": "2.0", "id": request.get("id"), "method": "tools/call", "params": params}
        upstream_headers = {
            **headers,
            "accept": "application/json, text/event-stream",
            "content-type": "application/json",
            "mcp-method": "tools/call",
            "mcp-name": str(params.get("name")),
        }
        assert self.http is not None
        async with self.http.post(
            self.backend, data=json.dumps(sent, separators=(",", ":")), headers=upstream_headers
        ) as response:
            answer = json.loads(await response.read())
        result = answer.get("result") or {}
        failed = "error" in answer or result.get("isError") is True
        if self.audit is not None:
            await self.audit.append(self._proxied_event(principal, params, envelope, failed))
        if envelope is not None:
            called = CallResult(
                call_id=envelope.call_id,
                status=CallStatus.TERMINAL_ERROR if failed else CallStatus.SUCCESS,
                output=None
                if failed
                else result.get("structuredContent", {"content": result.get("content")}),
                metrics=CallMetrics(duration_ms=round((time.perf_counter() - started) * 1000, 3)),
                provenance=Provenance(
                    tool_id=f"{TENANT}:{SERVER}:{params.get('name')}",
                    tool_version="1.0.0",
                    digest="sha256:floor",
                ),
            )
            if not failed:
                result = dict(render_answer(called, result, legacy=False))  # type: ignore[arg-type]
        reply = {"jsonrpc": "2.0", "id": request.get("id"), "result": result}
        if "error" in answer:
            reply = {"jsonrpc": "2.0", "id": request.get("id"), "error": answer["error"]}
        await _answer(send, json.dumps(reply, separators=(",", ":")).encode())

    def _proxied_event(
        self, principal: Principal, params: dict[str, Any], envelope: CallRequest | None, failed: bool
    ) -> AuditEvent:
        assert self.audit is not None
        arguments = params.get("arguments") or {}
        trace_id = envelope.context.trace_id if envelope is not None else ""
        call_id = envelope.call_id if envelope is not None else ""
        return AuditEvent.by(
            principal,
            EventKind.CALL,
            tenant=TENANT,
            tool=f"{TENANT}:{SERVER}:{params.get('name')}",
            args_hash=self.audit.args_hash(arguments),
            decision="allow",
            reasons=ALLOWED.reasons,
            outcome="terminal_error" if failed else "success",
            code="S-TOOL-UPSTREAM-ERROR" if failed else None,
            trace_id=trace_id or "0" * 32,
            call_id=call_id or "floor",
            details={"version": "1.0.0"},
        )

    async def _relay(self, method: str, body: bytes, headers: dict[str, str], send: Any) -> None:
        """Any other request, as it came; a stream is passed on as it arrives."""
        assert self.http is not None
        headers = {**headers, "accept": "application/json, text/event-stream"}
        if body:
            headers["content-type"] = "application/json"
        async with self.http.request(method, self.backend, data=body or None, headers=headers) as response:
            answered = [
                (key.lower().encode(), value.encode())
                for key, value in response.headers.items()
                if key.lower() in _ANSWERED
            ]
            if response.content_type == "text/event-stream":
                await send({"type": "http.response.start", "status": response.status, "headers": answered})
                async for chunk in response.content.iter_any():
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                await send({"type": "http.response.body", "body": b""})
                return
            payload = await response.read()
        answered.append((b"content-length", str(len(payload)).encode()))
        await send({"type": "http.response.start", "status": response.status, "headers": answered})
        await send({"type": "http.response.body", "body": payload})


def main() -> None:
    floor_main(__doc__ or "", McpFloor, "upstream", "the upstream server's Streamable HTTP URL")


if __name__ == "__main__":
    main()
