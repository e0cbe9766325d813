"""One JSON error shape for every failure, so gateways can relay the backend's message verbatim."""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

__all__ = ["ApiError", "conflict", "handle_api_error", "handle_http_exception", "not_found"]


class ApiError(Exception):
    """A failure with an HTTP status, a stable machine code and a sentence for humans."""

    def __init__(self, status: int, code: str, message: str, details: list[str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details or []

    def response(self) -> JSONResponse:
        body: dict[str, object] = {"error": self.code, "message": self.message}
        if self.details:
            body["details"] = self.details
        return JSONResponse(body, status_code=self.status)


def not_found(kind: str, identifier: str) -> ApiError:
    return ApiError(404, "not_found", f"{kind} {identifier} does not exist")


def conflict(code: str, message: str) -> ApiError:
    return ApiError(409, code, message)


async def handle_api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return exc.response()


async def handle_http_exception(request: Request, exc: Exception) -> Response:
    """Starlette's own 404/405 become the same JSON shape as everything else."""
    assert isinstance(exc, HTTPException)
    codes = {404: "not_found", 405: "method_not_allowed"}
    message = f"{request.method} {request.url.path}: {exc.detail}"
    return JSONResponse(
        {"error": codes.get(exc.status_code, "http_error"), "message": message},
        status_code=exc.status_code,
        headers=exc.headers,
    )
