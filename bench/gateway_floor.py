"""The floor of a Python gateway on this stack: uvicorn in, aiohttp out, nothing in between.

A raw ASGI app served the way `colonnade serve` serves (uvicorn, httptools, uvloop) that answers
`POST /v1/calls` and `POST /mcp` by reading and parsing the JSON body, fetching the demo's
customer from the backend with aiohttp (one pooled session), and answering a JSON envelope
(REST) or a JSON-RPC tools/call result (MCP). No pipeline, no audit, no validation, no logging:
the CPU it spends per call is what any gateway built from these parts pays before doing any of
its own work. `bench/gateway_ab.py --floor` runs it beside the gateways it compares, so the
floor's gateway/backend ratio comes from the same run.

With `--guarantees`, the floor adds only the work a guarantee mandates per call, done by the
gateway's own code, so the price of the guarantees alone can be read beside the full gateway:
- `audit`: the call's audit record (the event the audit stage builds for this call: principal,
  tool, keyed hash of the arguments, decision, outcome, trace and call ids) appended with
  `AuditLog.append` to the same store the gateway uses (SQLite file under `--data-dir`, migrated
  by the gateway's migrator, `SqliteDirect`'s settings, the hash chain's seal), committed before
  the answer is sent;
- `envelope`: the request parsed into the `CallRequest` envelope (REST: with the REST surface's
  parser; MCP: from the tools/call params) and the answer built as a typed `CallResult`, dumped as
  the REST surface dumps it or rendered as the MCP surface renders a result (`result_body`: the
  output as text and structured content, the envelope in `_meta`);
- `auth`: the HTTP edge's authentication of the request's bearer token (the development issuer
  under `--data-dir`, as `make run` trusts it); a refusal is answered 401.

Run alone: .venv/bin/python bench/gateway_floor.py --port 8900 --backend http://127.0.0.1:8901
           [--guarantees audit,envelope,auth --data-dir /tmp/floor]
"""

from __future__ import annotations

import argparse
import json
import time
import uuid
from pathlib import Path
from typing import Any

import aiohttp
import uvicorn

from colonnade.calls.envelope import CallMetrics, CallRequest, CallResult, CallStatus, Provenance
from colonnade.config import Settings
from colonnade.governance.audit import AuditEvent, AuditLog, EventKind
from colonnade.governance.authorization import ALLOWED
from colonnade.governance.principal import ANONYMOUS_LOOPBACK, Principal
from colonnade.store.audit_repo import AuditStore
from colonnade.store.engine import create_store_engine
from colonnade.store.migrator import migrate_engine
from colonnade.surfaces.mcp.render import result_body

CUSTOMER_PATH = "/customers/C-1001"
TOOL = "acme:crm:get_customer"
TOOL_VERSION = "1.0.0"

GUARANTEES = ("audit", "envelope", "auth")
CALL_PATHS = ("/v1/calls", "/mcp")
BENCH_RESOURCE = "http://127.0.0.1/bench/mcp"
"""The audience of the benchmark's tokens (every gateway under test is told it is this resource)."""


def demo_read_event(principal: Principal, args_hash: str, trace_id: str, call_id: str) -> AuditEvent:
    """The event the audit stage records for an allowed, successful call of the demo's read."""
    return AuditEvent.by(
        principal,
        EventKind.CALL,
        tenant="acme",
        tool=TOOL,
        args_hash=args_hash,
        decision="allow",
        reasons=ALLOWED.reasons,
        outcome="success",
        code=None,
        trace_id=trace_id,
        call_id=call_id,
        details={"version": TOOL_VERSION},
    )


class Floor:
    """The ASGI app: one aiohttp session (and the guarantees' parts), opened at start-up."""

    def __init__(
        self, backend: str, guarantees: frozenset[str] = frozenset(), data_dir: Path | None = None
    ) -> None:
        self.backend = backend
        self.guarantees = guarantees
        self.data_dir = data_dir
        self.http: aiohttp.ClientSession | None = None
        self.audit: AuditLog | None = None
        self.authenticate: Any = None
        self._closers: list[Any] = []

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
        principal = ANONYMOUS_LOOPBACK
        if scope["path"] not in CALL_PATHS:  # the probes
            await _answer(send, b"{}")
            return
        if self.authenticate is not None:
            outcome = await self.authenticate(_headers(scope), scope)
            if not isinstance(outcome, Principal):
                await _answer(send, json.dumps({"error": outcome.code}).encode(), 401)
                return
            principal = outcome
        started = time.perf_counter()
        request = json.loads(body) if body else {}
        mcp = scope["path"] == "/mcp"
        envelope = self._envelope(request, mcp)
        assert self.http is not None
        async with self.http.get(self.backend + CUSTOMER_PATH) as response:
            customer = await response.json()
        if self.audit is not None:
            await self.audit.append(self._event(principal, envelope, request, mcp))
        if envelope is not None:
            result = CallResult(
                call_id=envelope.call_id,
                status=CallStatus.SUCCESS,
                output=customer,
                metrics=CallMetrics(duration_ms=round((time.perf_counter() - started) * 1000, 3)),
                provenance=Provenance(tool_id=TOOL, tool_version=TOOL_VERSION, digest="sha256:floor"),
            )
            if not mcp:
                await _answer(send, result.model_dump_json().encode())
                return
            answer: Any = {"jsonrpc": "2.0", "id": request.get("id"), "result": result_body(result)}
        elif mcp:
            text = json.dumps(customer)
            answer = {
                "jsonrpc": "2.0",
                "id": request.get("id"),
                "result": {"content": [{"type": "text", "text": text}], "structuredContent": customer},
            }
        else:
            answer = {"status": "success", "output": customer}
        await _answer(send, json.dumps(answer, separators=(",", ":")).encode())

    def _envelope(self, request: dict[str, Any], mcp: bool) -> CallRequest | None:
        """The typed envelope, as the REST surface parses it (MCP: built from the params)."""
        if "envelope" not in self.guarantees:
            return None
        if mcp:
            params = request.get("params", {})
            return CallRequest(tool_id=params.get("name", TOOL), input=params.get("arguments", {}))
        from colonnade.surfaces.envelope_parsing import parse_envelope

        parsed = parse_envelope(json.dumps(request).encode(), CallRequest)
        assert isinstance(parsed, CallRequest), parsed
        return parsed

    def _event(
        self, principal: Principal, envelope: CallRequest | None, request: dict[str, Any], mcp: bool
    ) -> AuditEvent:
        """The event the audit stage records for an allowed, successful call of the demo's tool."""
        assert self.audit is not None
        if envelope is not None:
            arguments, trace_id, call_id = envelope.input, envelope.context.trace_id, envelope.call_id
        else:
            arguments = request.get("params", {}).get("arguments", {}) if mcp else request.get("input", {})
            trace_id, call_id = uuid.uuid4().hex, str(uuid.uuid4())
        return demo_read_event(principal, self.audit.args_hash(arguments), trace_id, call_id)

    async def _lifespan(self, receive: Any, send: Any) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                self.http = aiohttp.ClientSession()
                await self._open_guarantees()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                for close in reversed(self._closers):
                    await close()
                if self.http is not None:
                    await self.http.close()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _open_guarantees(self) -> None:
        if not self.guarantees & {"audit", "auth"}:
            return
        assert self.data_dir is not None, "--data-dir is needed for audit and auth"
        auth = {"dev_issuer": "auth" in self.guarantees, "resource": BENCH_RESOURCE}
        settings = Settings.model_validate({"data_dir": self.data_dir, "auth": auth})
        engine = create_store_engine(settings.effective_database_url)
        await migrate_engine(engine)
        self._closers.append(engine.dispose)
        if "audit" in self.guarantees:
            from colonnade.runtime.governance import audit_key

            self.audit = AuditLog(AuditStore(engine), audit_key(settings))
            self._closers.append(self.audit.store.aclose)
            self._closers.append(self.audit.aclose)
        if "auth" in self.guarantees:
            from colonnade.catalog.catalog import Catalog
            from colonnade.runtime.governance import Governance
            from colonnade.surfaces.edge_auth import edge_authenticator

            governance = Governance(settings, Catalog(), engine)
            assert governance.authenticator is not None and governance.resource is not None
            self.authenticate = edge_authenticator(governance.authenticator, governance.resource)


def _headers(scope: dict[str, Any]) -> Any:
    from starlette.datastructures import Headers

    return Headers(scope=scope)


async def _answer(send: Any, payload: bytes, status: int = 200) -> None:
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})


def floor_main(description: str, make_app: Any, target: str, target_help: str) -> None:
    """Parse a floor's command line and serve it: `make_app(target_url, guarantees, data_dir)`."""
    parser = argparse.ArgumentParser(
        description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--port", type=int, required=True, help="loopback port to serve on")
    parser.add_argument(f"--{target}", dest="target", metavar="URL", required=True, help=target_help)
    parser.add_argument(
        "--guarantees", default="", help=f"comma-separated mandated work to add: {', '.join(GUARANTEES)}"
    )
    parser.add_argument("--data-dir", type=Path, help="the store and keys of audit and auth")
    args = parser.parse_args()
    wanted = frozenset(name for name in args.guarantees.split(",") if name)
    if wanted - set(GUARANTEES):
        parser.error(f"unknown guarantees: {', '.join(sorted(wanted - set(GUARANTEES)))}")
    if wanted & {"audit", "auth"} and args.data_dir is None:
        parser.error("--data-dir is needed for audit and auth")
    app = make_app(args.target, wanted, args.data_dir)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", http="httptools")


def main() -> None:
    floor_main(__doc__ or "", Floor, "backend", "the demo backend's base URL")


if __name__ == "__main__":
    main()
