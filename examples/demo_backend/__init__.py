"""A small CRM + billing HTTP service with its own SQLite data: the backend of the demo contracts.

`create_app(db_path)` builds the Starlette app (for tests and `make run`);
`python -m examples.demo_backend` serves it on 127.0.0.1:8766.
"""

from examples.demo_backend.app import DEFAULT_HOST, DEFAULT_PORT, create_app
from examples.demo_backend.db import DEFAULT_DB_PATH

__all__ = ["DEFAULT_DB_PATH", "DEFAULT_HOST", "DEFAULT_PORT", "create_app"]
