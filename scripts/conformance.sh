#!/usr/bin/env bash
# Transparency of Colonnade under the MCP conformance suite (tests/conformance/transparency.py):
# installs Node 22 and @modelcontextprotocol/conformance into .cache/node, starts the reference
# server and a gateway with it as the only downstream server, runs the suite at 2025-11-25 and
# 2026-07-28 against both, prints both counts and every check that differs.
# Exit 0: transparent; 1: a check differs; 2: npm (or its registry) is out of reach.
set -euo pipefail
cd "$(dirname "$0")/.."
make --silent install
PYTHONPATH=. exec .venv/bin/python -m tests.conformance.transparency "$@"
