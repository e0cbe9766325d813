"""`python -m examples.demo_backend [--host H] [--port P] [--db PATH] [--reset]` from the repo root."""

from __future__ import annotations

import argparse
import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path

import uvicorn

from examples.demo_backend.app import DEFAULT_HOST, DEFAULT_PORT, create_app
from examples.demo_backend.db import DEFAULT_DB_PATH, open_database


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m examples.demo_backend",
        description="Serve the CRM and billing demo API that the contracts in examples/contracts describe.",
    )
    add = parser.add_argument
    add("--host", default=DEFAULT_HOST, help=f"interface to listen on (default {DEFAULT_HOST})")
    add("--port", type=int, default=DEFAULT_PORT, help=f"TCP port (default {DEFAULT_PORT})")
    add("--db", type=Path, default=DEFAULT_DB_PATH, help=f"SQLite file, seeded when new ({DEFAULT_DB_PATH})")
    add("--reset", action="store_true", help="delete the database first and start again from the seed")
    add("--log-level", default="warning", choices=["debug", "info", "warning", "error"], help="uvicorn logs")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if not 0 <= args.port <= 65535:
        print(f"error: --port {args.port} is not a TCP port (0-65535)", file=sys.stderr)
        return 2
    try:
        if args.reset:
            args.db.unlink(missing_ok=True)
        open_database(args.db).close()
    except (OSError, sqlite3.Error) as exc:
        print(f"error: cannot open the demo database {args.db}: {exc}", file=sys.stderr)
        print("fix: pass a writable file path with --db", file=sys.stderr)
        return 2
    print(f"demo backend: http://{args.host}:{args.port} (database {args.db})", flush=True)
    uvicorn.run(create_app(args.db), host=args.host, port=args.port, log_level=args.log_level)
    return 0


if __name__ == "__main__":
    sys.exit(main())
