"""A small real HTTP backend for the change-control suite's `orders` contract versions
(`tests/fixtures/contracts/versions/`), and those files pointed at it."""

from __future__ import annotations

from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

__all__ = ["VERSIONS", "create_app", "version_file"]

VERSIONS = Path(__file__).resolve().parent.parent / "fixtures" / "contracts" / "versions"
_ORDERS = {"O-1001": {"order_id": "O-1001", "status": "open", "total": 12.5}}


async def _list(request: Request) -> JSONResponse:
    status = request.query_params.get("status")
    orders = [o for o in _ORDERS.values() if status is None or o["status"] == status]
    return JSONResponse({"orders": orders})


async def _get(request: Request) -> JSONResponse:
    order = _ORDERS.get(request.path_params["order_id"])
    return JSONResponse(order) if order else JSONResponse({"error": "no such order"}, status_code=404)


async def _create(request: Request) -> JSONResponse:
    body = await request.json()
    return JSONResponse({"order_id": "O-2001", "status": "open", **body}, status_code=201)


async def _cancel(request: Request) -> JSONResponse:
    return JSONResponse({"order_id": request.path_params["order_id"], "status": "cancelled"})


async def _track(request: Request) -> JSONResponse:
    return JSONResponse({"order_id": request.path_params["order_id"], "at": "depot"})


def create_app() -> Starlette:
    return Starlette(
        routes=[
            Route("/api/orders", _list, methods=["GET"]),
            Route("/api/orders", _create, methods=["POST"]),
            Route("/api/orders/{order_id}", _get, methods=["GET"]),
            Route("/api/orders/{order_id}/cancel", _cancel, methods=["POST"]),
            Route("/api/orders/{order_id}/tracking", _track, methods=["GET"]),
        ]
    )


def version_file(folder: Path, version: str, backend_url: str) -> Path:
    """The fixture file of `version` with its backend at `backend_url` (the loopback server)."""
    text = (VERSIONS / f"orders-{version}.yaml").read_text(encoding="utf-8")
    path = folder / f"orders-{version}.yaml"
    path.write_text(text.replace("https://orders.example.com/api", f"{backend_url}/api"), encoding="utf-8")
    return path
