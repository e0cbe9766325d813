"""The checks a downstream server added over HTTP passes, for REST's `POST /v1/servers` and the pages.

A definition is validated as a `servers:` entry of colonnade.yaml is (the problems worded the same
way), must not reuse a configured name (unless it `replaces` that server, whose name it must keep),
and a stdio server's command must exist on this host; the first failing check is the answer, with
its registry code and HTTP status.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import ValidationError

from colonnade.config import McpServerSettings, server_definition_problems

__all__ = ["ServerDefinitions", "ServerRefused", "checked_server"]


class ServerDefinitions(Protocol):
    def status(self) -> list[dict[str, Any]]: ...

    def unstartable(self, settings: McpServerSettings) -> str | None: ...


@dataclass(frozen=True, slots=True)
class ServerRefused:
    code: str
    message: str
    http_status: int
    problems: list[str] = field(default_factory=list)


def checked_server(
    servers: ServerDefinitions, definition: bytes | Mapping[str, Any], *, replaces: str | None = None
) -> McpServerSettings | ServerRefused:
    try:
        if isinstance(definition, bytes):
            settings = McpServerSettings.model_validate_json(definition)
        else:
            settings = McpServerSettings.model_validate(dict(definition))
    except ValidationError as exc:
        problems = server_definition_problems(exc)
        return ServerRefused("I-REQ-SERVER-CONFIG", "; ".join(problems), 400, problems)
    if replaces is not None and settings.name != replaces:
        problem = (
            f"name: the definition names {settings.name!r}; it replaces {replaces!r}, whose name it keeps"
        )
        return ServerRefused("I-REQ-SERVER-CONFIG", problem, 400, [problem])
    if replaces is None and any(status["name"] == settings.name for status in servers.status()):
        return ServerRefused(
            "I-REQ-SERVER-EXISTS", f"a server named {settings.name!r} is configured already", 409
        )
    missing = servers.unstartable(settings)
    if missing is not None:
        return ServerRefused("I-REQ-SERVER-CONFIG", missing, 400, [f"command: {missing}"])
    return settings
