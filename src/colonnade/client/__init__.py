"""The agent's side of the tool-call contract: a Python client for Colonnade's REST and MCP surfaces.

What the contract asks of an agent, done once here instead of in every agent: idempotency keys
derived from the call (`keys.py`), deadlines carried to the gateway, retries only when the outcome
says so, after `retry_after_ms`, with jittered backoff inside a total budget (`backoff.py`), output
checked against the tool's schema, the approval flow (wait for a decision, then resume), two-phase
prepare, commit and discard. Async (`AsyncColonnade`) and sync (`Colonnade`); over REST
(`RestTransport`) or MCP (`McpTransport`, around the official `mcp` client).
"""

from colonnade.client.agent import AsyncColonnade, CallOptions
from colonnade.client.backoff import Backoff
from colonnade.client.client_errors import ApprovalNotGranted, ClientError, OutputSchemaMismatch
from colonnade.client.keys import idempotency_key
from colonnade.client.mcp_transport import McpTransport
from colonnade.client.rest_transport import RestTransport
from colonnade.client.sync import Colonnade
from colonnade.client.transport import Transport

__all__ = [
    "ApprovalNotGranted",
    "AsyncColonnade",
    "Backoff",
    "CallOptions",
    "ClientError",
    "Colonnade",
    "McpTransport",
    "OutputSchemaMismatch",
    "RestTransport",
    "Transport",
    "idempotency_key",
]
