"""The environment variables that steer the test suite, named in one place.

They live outside the `COLONNADE_` namespace on purpose: the gateway reads every `COLONNADE_*`
variable as a setting and refuses unknown ones, so a test switch under that prefix would make
every gateway an end-to-end test starts exit with "unknown setting".
"""

from __future__ import annotations

import os

__all__ = [
    "POSTGRES_URL_VAR",
    "PREFIX",
    "REDIS_URL_VAR",
    "SKIP_POSTGRES_VAR",
    "TEST_VARIABLES",
    "UPDATE_GOLDEN_VAR",
    "flag",
]

PREFIX = "CLN_TEST_"
POSTGRES_URL_VAR = f"{PREFIX}POSTGRES_URL"
"""PostgreSQL URL of the store tests (default postgresql+asyncpg://postgres@127.0.0.1:5432/test)."""
SKIP_POSTGRES_VAR = f"{PREFIX}SKIP_POSTGRES"
"""`1` skips the PostgreSQL variants when no PostgreSQL answers."""
REDIS_URL_VAR = f"{PREFIX}REDIS_URL"
"""Redis URL of the shared-state tests (default redis://127.0.0.1:6379/0)."""
UPDATE_GOLDEN_VAR = f"{PREFIX}UPDATE_GOLDEN"
"""`1` rewrites the golden REST results instead of comparing with them."""
TEST_VARIABLES = (POSTGRES_URL_VAR, REDIS_URL_VAR, SKIP_POSTGRES_VAR, UPDATE_GOLDEN_VAR)


def flag(name: str) -> bool:
    """Is the switch `name` set to 1?"""
    return os.environ.get(name) == "1"
