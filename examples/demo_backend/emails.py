"""E-mail syntax check behind `GET /utils/validate-email`: pure computation, nothing stored."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from examples.demo_backend.fields import FieldReader

__all__ = ["EmailCheck", "check_email", "routes"]

_LOCAL = re.compile(r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*")
_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")
_TLD = re.compile(r"[A-Za-z]{2,63}")
MAX_ADDRESS = 254
MAX_LOCAL = 64


@dataclass(frozen=True, slots=True)
class EmailCheck:
    """The verdict on one address; `reason` names the first rule it breaks."""

    email: str
    valid: bool
    normalized: str | None
    reason: str | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def check_email(address: str) -> EmailCheck:
    """Check the common dot-atom syntax (`local@domain.tld`); normalise by trimming and lower-casing."""
    reason = _first_problem(address.strip())
    if reason is not None:
        return EmailCheck(address, False, None, reason)
    return EmailCheck(address, True, address.strip().lower(), None)


def _first_problem(address: str) -> str | None:
    if not address:
        return "empty"
    if len(address) > MAX_ADDRESS:
        return "too_long"
    ats = address.count("@")
    if ats == 0:
        return "missing_at_sign"
    if ats > 1:
        return "several_at_signs"
    local, domain = address.split("@")
    if len(local) > MAX_LOCAL or _LOCAL.fullmatch(local) is None:
        return "bad_local_part"
    labels = domain.split(".")
    if len(labels) < 2 or not all(_LABEL.fullmatch(label) for label in labels):
        return "bad_domain"
    if _TLD.fullmatch(labels[-1]) is None:
        return "bad_domain"
    return None


async def validate_email(request: Request) -> JSONResponse:
    reader = FieldReader(request.query_params, from_query=True)
    email = reader.text("email", required=True, min_length=0, max_length=320)
    reader.check()
    return JSONResponse(check_email(email or "").to_dict())


routes = [Route("/utils/validate-email", validate_email, methods=["GET"])]
