"""A Starlette endpoint that answers with what it received as a body: media type, fields, files.

Backends in tests grow it as an echo route, so a test can check what the gateway put on the wire:
the raw body, the Content-Type, and the body parsed as the backend's framework parses it (form
fields in order, multipart files with their name, file name, media type and bytes).
"""

from __future__ import annotations

import base64
from typing import Any

from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

__all__ = ["form_echo"]

_FORMS = ("application/x-www-form-urlencoded", "multipart/form-data")


async def form_echo(request: Request) -> Response:
    content_type = request.headers.get("content-type", "")
    media = content_type.split(";")[0].strip().lower()
    echoed: dict[str, Any] = {"method": request.method, "content_type": content_type, "media_type": media}
    if media not in _FORMS:
        echoed["raw"] = (await request.body()).decode("utf-8", errors="replace")
        return JSONResponse(echoed)
    if media == _FORMS[0]:
        echoed["raw"] = (await request.body()).decode("ascii")
    fields: list[list[str]] = []
    files: list[dict[str, Any]] = []
    async with request.form() as form:
        for name, value in form.multi_items():
            if isinstance(value, UploadFile):
                data = await value.read()
                files.append(
                    {
                        "name": name,
                        "filename": value.filename,
                        "content_type": value.content_type,
                        "base64": base64.b64encode(data).decode("ascii"),
                    }
                )
            else:
                fields.append([name, value])
    echoed.update(fields=fields, files=files)
    return JSONResponse(echoed)
