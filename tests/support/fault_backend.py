"""A real HTTP backend that misbehaves on request and keeps a ledger of every effect it executed.

Faults are chosen per request with the `X-Fault` header (the contract maps a `fault` argument to it):
  ok | 429:<ms> | 503 | 500 | slow:<ms> | cut | malformed | bad_output | cut_after_effect
  flaky:<n>:<fault>   -> <fault> for the first n attempts of one `X-Attempt-Key`, then ok
                         (GET /attempts/<key> tells how many requests of that key arrived)
Effects honour `Idempotency-Key` (a repeated key replays the first response, as payment APIs do);
payments do not (every request pays again), so the ledger shows every repeat the gateway sends.
`POST /echo` answers with the body it received (media type, form fields, files): see `form_echo`.
Run: python -m tests.support.fault_backend --port P
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import time
from collections import defaultdict
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from tests.support.form_echo import form_echo

__all__ = ["FaultBackend", "create_app"]


class _Cut(Exception):
    """Raised after a partial answer: the client sees the connection close mid-body."""


class FaultBackend:
    def __init__(self) -> None:
        self.ledger: list[dict[str, Any]] = []
        self.items: dict[str, str] = {"I-1": "one", "I-2": "two"}
        self.reservations: dict[str, str] = {}
        self.attempts: defaultdict[str, int] = defaultdict(int)
        self.replies: dict[str, dict[str, Any]] = {}
        self.healthy = True
        self._ids = itertools.count(1)

    def record(self, kind: str, request: Request, **fields: Any) -> None:
        self.ledger.append(
            {"kind": kind, "key": request.headers.get("idempotency-key"), "at": time.time(), **fields}
        )

    async def fault(self, request: Request) -> Response | None:
        """Apply the requested fault; None means answer normally."""
        spec = request.headers.get("x-fault", "ok")
        if spec.startswith("flaky:"):
            _, count, inner = spec.split(":", 2)
            attempt_key = request.headers.get("x-attempt-key", "")
            self.attempts[attempt_key] += 1
            if self.attempts[attempt_key] > int(count):
                return None
            spec = inner
        kind, _, arg = spec.partition(":")
        if kind == "ok" or kind in ("bad_output", "cut_after_effect"):
            return None
        if kind == "429":
            seconds = round(int(arg or "1000") / 1000)
            return JSONResponse({"message": "slow down"}, 429, headers={"retry-after": str(seconds)})
        if kind in ("503", "500"):
            return JSONResponse({"message": f"injected {kind}"}, int(kind))
        if kind == "slow":
            await asyncio.sleep(int(arg or "1000") / 1000)
            return None
        if kind == "cut":
            raise _Cut
        if kind == "malformed":
            return Response(b'{"not": json', media_type="application/json")
        return JSONResponse({"message": f"unknown fault {spec!r}"}, 400)


def create_app(state: FaultBackend | None = None) -> Starlette:
    backend = state or FaultBackend()

    async def get_item(request: Request) -> Response:
        if (faulty := await backend.fault(request)) is not None:
            return faulty
        item_id = request.path_params["item_id"]
        if item_id not in backend.items:
            return JSONResponse({"message": f"no item {item_id}"}, 404)
        if request.headers.get("x-fault") == "bad_output":
            return JSONResponse({"id": item_id, "value": 42})
        return JSONResponse({"id": item_id, "value": backend.items[item_id]})

    async def put_item(request: Request) -> Response:
        if (faulty := await backend.fault(request)) is not None:
            return faulty
        body = await request.json()
        item_id = request.path_params["item_id"]
        backend.items[item_id] = str(body.get("value", ""))
        backend.record("put", request, item_id=item_id)
        return JSONResponse({"id": item_id, "value": backend.items[item_id]})

    async def drop_item(request: Request) -> Response:
        if (faulty := await backend.fault(request)) is not None:
            return faulty
        item_id = request.path_params["item_id"]
        dropped = backend.items.pop(item_id, None)
        backend.record("drop", request, item_id=item_id)
        return JSONResponse({"id": item_id, "dropped": dropped is not None})

    async def create_effect(request: Request) -> Response:
        if (faulty := await backend.fault(request)) is not None:
            return faulty
        key = request.headers.get("idempotency-key")
        if key is not None and key in backend.replies:
            return JSONResponse(backend.replies[key], 201)
        body = await request.json()
        reply = {"effect_id": f"E-{next(backend._ids)}", "note": body.get("note", "")}
        backend.record("effect", request, effect_id=reply["effect_id"], note=reply["note"])
        if key is not None:
            backend.replies[key] = reply
        if request.headers.get("x-fault", "").endswith("cut_after_effect"):
            raise _Cut
        return JSONResponse(reply, 201)

    async def create_payment(request: Request) -> Response:
        """A backend without deduplication: each request that arrives is one more payment.

        The body is read before any fault applies, so a slow payment goes through even when its
        caller has gone away meanwhile (as a real backend would).
        """
        body = await request.json()
        if (faulty := await backend.fault(request)) is not None:
            return faulty
        reply = {"payment_id": f"PAY-{next(backend._ids)}", "note": body.get("note", "")}
        backend.record("payment", request, payment_id=reply["payment_id"], note=reply["note"])
        if request.headers.get("x-fault", "").endswith("cut_after_effect"):
            raise _Cut
        return JSONResponse(reply, 201)

    async def reserve(request: Request) -> Response:
        if (faulty := await backend.fault(request)) is not None:
            return faulty
        reservation_id = f"R-{next(backend._ids)}"
        backend.reservations[reservation_id] = "held"
        backend.record("reserve", request, reservation_id=reservation_id)
        return JSONResponse({"reservation_id": reservation_id, "state": "held"}, 201)

    def _transition(kind: str, target: str) -> Any:
        async def handler(request: Request) -> Response:
            reservation_id = request.path_params["reservation_id"]
            current = backend.reservations.get(reservation_id)
            if current is None:
                return JSONResponse({"message": f"no reservation {reservation_id}"}, 404)
            if current != "held":
                return JSONResponse({"message": f"reservation {reservation_id} is {current}"}, 409)
            backend.reservations[reservation_id] = target
            backend.record(kind, request, reservation_id=reservation_id)
            return JSONResponse({"reservation_id": reservation_id, "state": target})

        return handler

    async def ledger(_: Request) -> Response:
        return JSONResponse({"ledger": backend.ledger, "reservations": backend.reservations})

    async def attempts(request: Request) -> Response:
        return JSONResponse({"attempts": backend.attempts.get(request.path_params["key"], 0)})

    async def reset(_: Request) -> Response:
        backend.ledger.clear()
        backend.replies.clear()
        backend.attempts.clear()
        backend.reservations.clear()
        return JSONResponse({"ok": True})

    async def healthz(_: Request) -> Response:
        return JSONResponse({"ok": backend.healthy}, 200 if backend.healthy else 503)

    async def set_health(request: Request) -> Response:
        backend.healthy = request.path_params["state"] == "up"
        return JSONResponse({"ok": backend.healthy})

    return Starlette(
        middleware=[Middleware(_CutConnections)],
        routes=[
            Route("/items/{item_id}", get_item, methods=["GET"]),
            Route("/items/{item_id}", put_item, methods=["PUT"]),
            Route("/items/{item_id}/drop", drop_item, methods=["DELETE"]),
            Route("/effects", create_effect, methods=["POST"]),
            Route("/payments", create_payment, methods=["POST"]),
            Route("/reservations", reserve, methods=["POST"]),
            Route(
                "/reservations/{reservation_id}/confirm",
                _transition("confirm", "confirmed"),
                methods=["POST"],
            ),
            Route(
                "/reservations/{reservation_id}/cancel", _transition("cancel", "cancelled"), methods=["POST"]
            ),
            Route("/echo", form_echo, methods=["POST", "PUT", "PATCH"]),
            Route("/ledger", ledger, methods=["GET"]),
            Route("/attempts/{key}", attempts, methods=["GET"]),
            Route("/reset", reset, methods=["POST"]),
            Route("/healthz", healthz, methods=["GET"]),
            Route("/health/{state}", set_health, methods=["POST"]),
        ],
    )


class _CutConnections:
    """Turns `_Cut` into a half-sent answer: headers and a few bytes, then the connection drops."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self.app(scope, receive, send)
        except _Cut:
            body = json.dumps({"partial": True}).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", b"1000")],
                }
            )
            await send({"type": "http.response.body", "body": body[:5], "more_body": True})
            raise


def main() -> None:
    parser = argparse.ArgumentParser(description="Fault-injecting backend with an effect ledger.")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    # Cut connections raise on purpose; their tracebacks are noise, so only critical logs remain.
    # A stop does not wait for `slow:` requests still sleeping: tests stop it with some in flight.
    uvicorn.run(
        create_app(),
        host="127.0.0.1",
        port=args.port,
        log_level="critical",
        access_log=False,
        timeout_graceful_shutdown=1,
    )


if __name__ == "__main__":
    main()
