"""The `colonnade` command line: one root Typer app; each command group lives in its own module."""

from __future__ import annotations

from colonnade.cli import (
    agents,  # noqa: F401
    approvals,  # noqa: F401
    audit,  # noqa: F401
    cards,  # noqa: F401
    contract_openapi,  # noqa: F401
    contract_store,  # noqa: F401
    contract_validate,  # noqa: F401
    demo,  # noqa: F401
    errors_command,  # noqa: F401
    keys,  # noqa: F401
    organ,  # noqa: F401
    route,  # noqa: F401
    serve,  # noqa: F401
    servers,  # noqa: F401
    smoke,  # noqa: F401
    subscriptions,  # noqa: F401
    token,  # noqa: F401
    tools,  # noqa: F401
    tools_describe,  # noqa: F401
)
from colonnade.cli.root import app, main

__all__ = ["app", "main"]
