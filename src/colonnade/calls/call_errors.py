"""The error taxonomy: every code a caller can meet, with its outcome status and a fix hint.

Codes are public and stable. The prefix says the class: I-REQ invalid request, A-AUTH
authentication/authorization, P-PRECOND precondition, R-TIMEOUT / R-UPSTREAM / R-CAP retryable,
S-TOOL tool fault, C-CONTRACT version problems, D-DATA data integrity. `docs/errors.md` is
generated from this registry.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from colonnade.adapters.outcome import INPUT_REQUIRED, TOOL_ERROR
from colonnade.calls.envelope import CallError, CallStatus

__all__ = [
    "INPUT_REQUIRED",
    "REGISTRY",
    "TOOL_ERROR",
    "ErrorSpec",
    "UnregisteredCode",
    "error",
    "spec_for",
]
# The two codes a surface renders differently (a server's own tool error, a question it asks):
# named here, in the one registry, so a surface reads them without importing an adapter.


@dataclass(frozen=True, slots=True)
class ErrorSpec:
    code: str
    status: CallStatus
    title: str
    fix: str


_INVALID = CallStatus.INVALID_REQUEST
_TERMINAL = CallStatus.TERMINAL_ERROR
_RETRY = CallStatus.RETRYABLE_ERROR

_SPECS = (
    ErrorSpec(
        "I-REQ-SCHEMA",
        _INVALID,
        "Arguments do not match the tool's input schema",
        "Fix each listed argument (see details.violations: JSON pointer and message) and call again.",
    ),
    ErrorSpec(
        "I-REQ-UNKNOWN-TOOL",
        _INVALID,
        "No tool has this name",
        "List the tools (tools/list or GET /v1/tools) and use a name exactly as listed.",
    ),
    ErrorSpec(
        "I-REQ-AMBIGUOUS-TOOL",
        _INVALID,
        "The bare tool name is borne by several tools this caller may call",
        "Call one of details.candidates by its canonical name (tenant:api:tool) or wire name; a bare "
        "llm.tool_name works only while it is unique among the tools you may call.",
    ),
    ErrorSpec(
        "I-REQ-ENVELOPE",
        _INVALID,
        "The call envelope is malformed",
        "Fix each listed field of the CallRequest (see details.violations) and send it again.",
    ),
    ErrorSpec(
        "I-REQ-TOO-LARGE",
        _INVALID,
        "The request body is larger than the gateway accepts",
        "Send a body under details.limit_bytes bytes; pass large data by reference (e.g. an id or a URL).",
    ),
    ErrorSpec(
        "I-REQ-CURSOR",
        _INVALID,
        "The paging cursor was not handed out by this gateway",
        "Pass back the next_cursor of the previous page unchanged, or omit it to start from the first page.",
    ),
    ErrorSpec(
        "I-REQ-QUERY",
        _INVALID,
        "A query parameter is invalid",
        "Fix the parameter named in details.parameter as details.expected describes, then send it again.",
    ),
    ErrorSpec(
        "I-REQ-UNKNOWN-RESOURCE",
        _INVALID,
        "No API key, agent or subscription has this id (among those the caller may see)",
        "List them (`colonnade keys list`, `agents list`, `subscriptions list` or GET /v1/...) and use an "
        "id exactly as listed.",
    ),
    ErrorSpec(
        "I-REQ-GOVERNANCE",
        _INVALID,
        "A request to change keys, agents or subscriptions is invalid",
        "Fix the field the message names (a known persona, Colonnade scopes, an API 'tenant:api' that the "
        "catalog serves, a public JWK) and send it again.",
    ),
    ErrorSpec(
        "I-REQ-DEADLINE-PASSED",
        _INVALID,
        "The call's deadline had already passed when the gateway received it",
        "Retrying as is cannot help: set constraints.deadline_unix_ms to a time in the future "
        "(milliseconds since the Unix epoch, e.g. now + 30000; 0 is the epoch itself), or leave it out "
        "and give timeout_ms.",
    ),
    ErrorSpec(
        "A-AUTH-ORIGIN",
        _TERMINAL,
        "The request's Host or Origin header is not allowed",
        "Address the gateway as 127.0.0.1 or localhost (the names a loopback gateway serves), from a "
        "client or a page of that origin; pages of other origins cannot call it.",
    ),
    ErrorSpec(
        "A-AUTH-CSRF",
        _TERMINAL,
        "A page form was sent without the token of the visitor's session",
        "Reload the page and send its form again; a form from another site, or from a session that "
        "has ended, is refused. Log in again if the session ended.",
    ),
    ErrorSpec(
        "A-AUTH-MISSING",
        _TERMINAL,
        "The request carries no credential",
        "Send `Authorization: Bearer <token>` (an OAuth access token or an API key); the gateway's "
        "/.well-known/oauth-protected-resource names the issuers it trusts. For the demo, use the token "
        "in .colonnade/demo-token.",
    ),
    ErrorSpec(
        "A-AUTH-MALFORMED",
        _TERMINAL,
        "The credential cannot be parsed",
        "Send `Authorization: Bearer <token>` or `Authorization: DPoP <token>` with one compact JWT or "
        "one Colonnade API key (col_...), exactly as issued.",
    ),
    ErrorSpec(
        "A-AUTH-EXPIRED",
        _TERMINAL,
        "The credential has expired",
        "Get a new token from your issuer (or `colonnade keys rotate` for an API key) and send it instead.",
    ),
    ErrorSpec(
        "A-AUTH-UPSTREAM-AUDIENCE",
        _TERMINAL,
        "The caller's token is not issued for this upstream, so it is not forwarded",
        "Get a token whose aud names the upstream (the message says which), or call another upstream's tool.",
    ),
    ErrorSpec(
        "A-AUTH-UPSTREAM-SUBJECT",
        _TERMINAL,
        "This upstream acts on the caller's behalf and needs the caller's own unexpired token",
        "Call with a fresh bearer token (JWT) from a trusted issuer; API keys and expired tokens cannot act.",
    ),
    ErrorSpec(
        "A-AUTH-UPSTREAM-EXCHANGE",
        _TERMINAL,
        "The authorization server refused to exchange the caller's token for this upstream",
        "Check the caller's grants at the authorization server for the audience the message names.",
    ),
    ErrorSpec(
        "R-UPSTREAM-EXCHANGE",
        _RETRY,
        "The authorization server could not be reached to exchange the caller's token",
        "Retry with backoff; if it persists an operator must check token_exchange.token_endpoint.",
    ),
    ErrorSpec(
        "A-AUTH-UPSTREAM-CONNECT",
        _TERMINAL,
        "This upstream acts with each user's own account there, and the caller has not connected one",
        "Open the gateway's Connected accounts page (/ui/connections, details.connect_url), press "
        "Connect for the provider the message names, approve at the provider, then call again.",
    ),
    ErrorSpec(
        "A-AUTH-UPSTREAM-OAUTH",
        _TERMINAL,
        "The upstream's OAuth provider refused to refresh the caller's grant",
        "Disconnect and connect the account again on /ui/connections; if it persists, the provider's "
        "error (in the message) says what it refuses.",
    ),
    ErrorSpec(
        "R-UPSTREAM-OAUTH",
        _RETRY,
        "The upstream's OAuth provider could not be reached to refresh the caller's grant",
        "Retry with backoff; if it persists an operator must check upstream_oauth's token_endpoint.",
    ),
    ErrorSpec(
        "A-AUTH-NOT-YET-VALID",
        _TERMINAL,
        "The token is not valid yet (nbf or iat lies in the future)",
        "Check the clocks of the issuer and the client; the gateway allows auth.leeway_s seconds of skew.",
    ),
    ErrorSpec(
        "A-AUTH-SIGNATURE",
        _TERMINAL,
        "The token's signature does not verify",
        "Use a token exactly as your issuer signed it; a changed or forged token is never accepted.",
    ),
    ErrorSpec(
        "A-AUTH-ALGORITHM",
        _TERMINAL,
        "The token is signed with an algorithm the gateway does not accept (e.g. none)",
        "Have the issuer sign with one of the algorithms configured for it (auth.issuers[].algorithms).",
    ),
    ErrorSpec(
        "A-AUTH-ISSUER",
        _TERMINAL,
        "The token comes from an issuer the gateway does not trust",
        "Get a token from one of the issuers listed in /.well-known/oauth-protected-resource, or ask an "
        "operator to add your issuer under auth.issuers.",
    ),
    ErrorSpec(
        "A-AUTH-AUDIENCE",
        _TERMINAL,
        "The token was issued for another resource",
        "Request a token whose audience (aud, the RFC 8707 resource) is this gateway's resource URL, "
        "as given in /.well-known/oauth-protected-resource.",
    ),
    ErrorSpec(
        "A-AUTH-SIGNING-KEY",
        _TERMINAL,
        "The token names a signing key the issuer does not publish",
        "Use a token signed with a current key of the issuer (its JWKS); an operator can check the "
        "issuer's jwks_url.",
    ),
    ErrorSpec(
        "A-AUTH-JWKS-UNAVAILABLE",
        _RETRY,
        "The issuer's signing keys cannot be fetched right now",
        "Retry shortly; if it persists an operator must check the issuer's jwks_url (auth.issuers[]).",
    ),
    ErrorSpec(
        "A-AUTH-CLAIMS",
        _TERMINAL,
        "A claim the gateway needs is missing or malformed",
        "Have the issuer include the claims named in the message (sub, exp, and the configured tenant, "
        "persona and scope claims; see docs/governance.md).",
    ),
    ErrorSpec(
        "A-AUTH-API-KEY",
        _TERMINAL,
        "The API key is not known to this gateway",
        "Send the key exactly as `colonnade keys create` printed it, or create a new one.",
    ),
    ErrorSpec(
        "A-AUTH-REVOKED",
        _TERMINAL,
        "The credential has been revoked",
        "Ask an operator for a new credential (`colonnade keys create`, `colonnade agents register`).",
    ),
    ErrorSpec(
        "A-AUTH-AGENT",
        _TERMINAL,
        "The agent is not registered with this gateway, or its token does not match its registration",
        "Register the agent first (`colonnade agents register`), and use tokens of the agent's tenant "
        "bound to its registered key.",
    ),
    ErrorSpec(
        "A-AUTH-DELEGATION",
        _TERMINAL,
        "The delegated token or the token exchange cannot be accepted (chain, narrowing, binding)",
        "Ask the gateway's token endpoint for a new delegated token no wider than its parent, for a "
        "registered agent of the same tenant, within auth.delegation.max_depth.",
    ),
    ErrorSpec(
        "A-AUTH-AGENT-TOKEN-LIFETIME",
        _TERMINAL,
        "An agent token may live at most 10 minutes",
        "Have the issuer mint agent tokens with exp - iat of at most auth.agent_token_max_s seconds (600), "
        "and get a fresh one when it runs out.",
    ),
    ErrorSpec(
        "A-AUTH-DPOP-REQUIRED",
        _TERMINAL,
        "The token is bound to a key (cnf.jkt) and needs a DPoP proof",
        "Send it as `Authorization: DPoP <token>` with a `DPoP` header: a proof signed by the bound key "
        "for this method and URL (RFC 9449).",
    ),
    ErrorSpec(
        "A-AUTH-DPOP-INVALID",
        _TERMINAL,
        "The DPoP proof does not match the request or the token",
        "Sign a new proof for exactly this request: htm = the method, htu = the URL without query, a "
        "fresh iat, ath = the token's hash, with the key the token is bound to.",
    ),
    ErrorSpec(
        "A-AUTH-DPOP-REPLAY",
        _TERMINAL,
        "This DPoP proof was used before",
        "Sign a new proof (with a new jti) for every request; a proof is good for one request only.",
    ),
    ErrorSpec(
        "A-AUTH-MTLS-REQUIRED",
        _TERMINAL,
        "The token is bound to a client certificate (cnf.x5t#S256) and the connection presented none",
        "Call over https presenting the certificate the token was issued to (RFC 8705); the gateway must "
        "serve TLS with server.tls.client_cert optional or required and a client_ca_file that signs it.",
    ),
    ErrorSpec(
        "A-AUTH-MTLS-MISMATCH",
        _TERMINAL,
        "The connection's client certificate is not the one the token is bound to",
        "Present the certificate whose SHA-256 thumbprint is the token's cnf.x5t#S256, or get a token "
        "bound to the certificate you present.",
    ),
    ErrorSpec(
        "A-AUTH-SCOPE",
        _TERMINAL,
        "The credential lacks the scope this request needs",
        "Get a credential with the scope named in details.required (see the persona matrix in "
        "docs/governance.md).",
    ),
    ErrorSpec(
        "A-AUTH-FORBIDDEN",
        _TERMINAL,
        "The caller may see this tool or resource but not use it this way",
        "Read the reason in the message (scope, persona or environment); ask the API's product owner "
        "or an admin for access.",
    ),
    ErrorSpec(
        "A-AUTH-SUBSCRIPTION-REQUIRED",
        _TERMINAL,
        "Calling this API needs an active subscription",
        "Subscribe to the API (`POST /v1/subscriptions` or `colonnade subscriptions request`) and wait "
        "for its product owner's approval when the API requires one.",
    ),
    ErrorSpec(
        "A-AUTH-POLICY-DENIED",
        _TERMINAL,
        "A policy denied the call",
        "Read the policies' reasons in details.reasons; ask the operator who owns the policy (see "
        "`colonnade policy eval`) if the call should be allowed.",
    ),
    ErrorSpec(
        "A-AUTH-GUARDRAIL-BLOCKED",
        _TERMINAL,
        "The arguments carry data a guardrail blocks (a secret, a card number...)",
        "Remove the value of the kind named in details.findings (at its path) from the arguments; "
        "an operator sets the actions in colonnade.yaml `guardrails:` or the contract's `llm.guardrails`.",
    ),
    ErrorSpec(
        "A-AUTH-POLICY-UNAVAILABLE",
        _RETRY,
        "No policy set can decide, so the call was refused (fail-closed)",
        "An operator must fix the policy files (`colonnade policy test`; GET /v1/policy shows the "
        "problem); the call can be retried once a policy set loads.",
    ),
    ErrorSpec(
        "A-AUTH-ATTESTATION-REQUIRED",
        _TERMINAL,
        "A policy requires this call to carry an attestation signed by the calling agent's key",
        "Call as a registered agent with a public key and send `attestation`: a compact JWS signed by "
        "that key over {tool, args_hash, call_id, iat} (see docs/policy.md).",
    ),
    ErrorSpec(
        "A-AUTH-ATTESTATION-INVALID",
        _TERMINAL,
        "The attestation does not verify, is stale, or does not match this call",
        "Sign a fresh attestation (iat within the window) with the agent's registered key over exactly "
        "this call: the tool's canonical name, the SHA-256 of its canonical JSON arguments, its call_id.",
    ),
    ErrorSpec(
        "A-AUTH-ATTESTATION-REPLAY",
        _TERMINAL,
        "This attestation was used before",
        "Sign a new attestation, with a new call_id, for every call; one attestation is good for one call.",
    ),
    ErrorSpec(
        "A-AUTH-NOT-CONFIGURED",
        _TERMINAL,
        "The gateway would listen beyond loopback without authentication",
        "Configure auth (auth.issuers, or auth.enabled with API keys) before binding a non-loopback "
        "address, or bind 127.0.0.1.",
    ),
    ErrorSpec(
        "A-AUTH-CONFIG",
        _TERMINAL,
        "The authentication settings cannot be used",
        "Fix the auth setting the message names (an issuer needs jwks_url or keys; a JWKS URL must be "
        "https or loopback; set auth.resource when binding every interface).",
    ),
    ErrorSpec(
        "A-AUTH-REGISTRATION",
        _INVALID,
        "The client registration request cannot be accepted",
        "Fix the registration metadata the message names (RFC 7591), or ask an operator to enable "
        "auth.dynamic_registration.",
    ),
    ErrorSpec(
        "I-REQ-UPSTREAM-REJECTED",
        _TERMINAL,
        "The backend rejected the request",
        "Read the backend's message in error.message, correct the arguments, then call again.",
    ),
    ErrorSpec(
        "I-REQ-UPSTREAM-NOT-FOUND",
        _TERMINAL,
        "The backend has no such resource",
        "Check the identifiers in the arguments (e.g. search first to find a valid id).",
    ),
    ErrorSpec(
        "A-AUTH-UPSTREAM",
        _TERMINAL,
        "The backend refused the gateway's credentials",
        "An operator must check the backend credential named in the contract's backend.auth.secret.",
    ),
    ErrorSpec(
        "P-PRECOND-APPROVAL-REQUIRED",
        _TERMINAL,
        "This tool needs a human's approval before it runs, and this gateway cannot ask for one",
        "Call it without dry_run on a gateway with a database: the call is then parked and answered "
        "`pending` with an approval id for an approver (docs/approvals.md).",
    ),
    ErrorSpec(
        "P-PRECOND-APPROVAL-PENDING",
        _TERMINAL,
        "The call is parked until a human approves it; nothing ran yet (envelope version 1's "
        "rendering of a pending call)",
        "Have an approver approve details.approval_id, then call again with the approval's token, or "
        "resume it (POST /v1/approvals/{approval_id}/resume) before details.expires_at; "
        "details.next_action says how.",
    ),
    ErrorSpec(
        "P-PRECOND-INPUT-PENDING",
        _TERMINAL,
        "The call is parked until the user answers a question; nothing ran yet (envelope version 1's "
        "rendering of a pending call)",
        "Answer as details.next_action says before details.expires_at, or ask for envelope version 2 "
        "to receive the pending object itself.",
    ),
    ErrorSpec(
        "P-PRECOND-APPROVAL-STATE",
        _TERMINAL,
        "The approval is not in a state that allows this (already decided, used or expired)",
        "Read it (`GET /v1/approvals/{id}` or `colonnade approvals show ID`); call the tool again to ask "
        "for a new approval if it was denied or expired.",
    ),
    ErrorSpec(
        "P-PRECOND-APPROVAL-DENIED",
        _TERMINAL,
        "The approval was denied (by an approver, or declined by the requesting user)",
        "Read the approver's comment (`GET /v1/approvals/{id}`); change the request and call again if it "
        "still makes sense.",
    ),
    ErrorSpec(
        "A-AUTH-APPROVAL-SELF",
        _TERMINAL,
        "The requester of a call cannot approve it (four-eyes)",
        "Ask another person with an approver persona for this API to approve it.",
    ),
    ErrorSpec(
        "A-AUTH-APPROVER",
        _TERMINAL,
        "The caller's persona may not approve calls of this API",
        "Ask someone whose persona is listed for the API under approvals.approvers (default: an admin of "
        "the tool's tenant).",
    ),
    ErrorSpec(
        "A-AUTH-APPROVAL-TOKEN",
        _TERMINAL,
        "The approval token is invalid, or was issued for another call, requester, tenant or version",
        "Use the token of this approval unchanged, from the principal that asked for it, on the tool and "
        "version it names; otherwise call the tool without a token to ask for a new approval.",
    ),
    ErrorSpec(
        "A-AUTH-APPROVAL-REPLAY",
        _TERMINAL,
        "The approval token was used already (one token runs one call)",
        "Call the tool without a token to ask for a new approval.",
    ),
    ErrorSpec(
        "A-AUTH-APPROVAL-EXPIRED",
        _TERMINAL,
        "The approval token expired (tokens live at most 5 minutes)",
        "Call the tool without a token to ask for a new approval, and use the next token promptly.",
    ),
    ErrorSpec(
        "A-AUTH-APPROVAL-ARGUMENTS",
        _TERMINAL,
        "The call's arguments differ from the approved ones",
        "Send exactly the approved arguments (the token binds their SHA-256), or ask for a new approval.",
    ),
    ErrorSpec(
        "A-AUTH-RESUME-TENANT",
        _TERMINAL,
        "The parked call (prepared, awaiting approval or awaiting input) belongs to another tenant",
        "Commit, discard or resume a parked call as the principal that made it, in its tenant; a token "
        "alone does not carry the right. Call the tool yourself if you need its effect.",
    ),
    ErrorSpec(
        "A-AUTH-RESUME-PRINCIPAL",
        _TERMINAL,
        "Only the principal that made a parked call may commit, discard or resume it",
        "Ask the principal that made the call (details.parked_call_id, in the audit log) to commit or "
        "discard it; an approved call is resumed by its requester or the approver who approved it.",
    ),
    ErrorSpec(
        "A-AUTH-RESUME-TOOL",
        _TERMINAL,
        "The principal that made the parked call may no longer call its tool",
        "Regain access to the tool (subscription, allow-list, persona) before its deadline; otherwise the "
        "parked call expires and is rolled back.",
    ),
    ErrorSpec(
        "P-PRECOND-CONFLICT",
        _TERMINAL,
        "The backend reports a conflict with the resource's state",
        "Fetch the resource's current state and decide whether the call still makes sense.",
    ),
    ErrorSpec(
        "I-REQ-IDEMPOTENCY-MISMATCH",
        _INVALID,
        "This idempotency key was used before with different input",
        "Use a new idempotency_key for a different request; reuse a key only to retry the same call.",
    ),
    ErrorSpec(
        "P-PRECOND-NET-DENIED",
        _TERMINAL,
        "The tool's backend is outside the allowed network",
        "Add the backend's host:port to constraints.net_allowlist, or call a tool whose backend is allowed.",
    ),
    ErrorSpec(
        "P-PRECOND-NET-UNCHECKED",
        _TERMINAL,
        "The gateway cannot tell which network the tool's binding reaches",
        "Report to the gateway operator: the tool's source gives no address the network policy can check. "
        "An in-process organ that reaches the network runs only for calls without constraints.net_allowlist.",
    ),
    ErrorSpec(
        "P-PRECOND-COMMIT-TOKEN",
        _TERMINAL,
        "The commit token is unknown, already used, discarded or rolled back",
        "Start over with a new call; a commit token can be used once (to commit or to discard), before its "
        "deadline.",
    ),
    ErrorSpec(
        "C-CONTRACT-VERSION-MISMATCH",
        _TERMINAL,
        "No published version of the tool satisfies tool_version",
        "Pick a version listed in details.available (or drop tool_version to use the current one).",
    ),
    ErrorSpec(
        "C-CONTRACT-AMBIGUOUS-VERSION",
        _TERMINAL,
        "tool_version matches versions of more than one major version",
        "Narrow tool_version to one major version (e.g. ^1.2 instead of >=1.0.0); see details.matching.",
    ),
    ErrorSpec(
        "C-CONTRACT-SUNSET",
        _TERMINAL,
        "The tool's version reached its sunset and no longer answers",
        "Move to the successor version named in details.successor: call with tool_version set to its "
        "major (e.g. '^2'), after checking what changed (`colonnade contract diff`); details.sunset_at "
        "says when this version stopped answering.",
    ),
    ErrorSpec(
        "C-CONTRACT-DIGEST-MISMATCH",
        _TERMINAL,
        "The tool's definition differs from the digest the caller expects",
        "List the tool again to see its current definition and digest, then decide whether to call it.",
    ),
    ErrorSpec(
        "R-TIMEOUT-001",
        _RETRY,
        "Deadline exceeded",
        "Retry later or with a larger timeout_ms; the backend did not answer in time.",
    ),
    ErrorSpec(
        "R-TIMEOUT-UNRECORDED",
        _RETRY,
        "The call ran (its backend may have acted), but its outcome or audit record could not be made "
        "durable before the deadline; its result is withheld",
        "Its effect may have happened: send the same call again with the same idempotency_key after "
        "details.retry_after_ms. The gateway answers the outcome once it is recorded and does not run the "
        "call a second time; never resend it with a new key.",
    ),
    ErrorSpec(
        "R-TIMEOUT-STORE",
        _RETRY,
        "The gateway's database did not answer before the call's deadline; the call did not run",
        "Retry after details.retry_after_ms (with the same idempotency_key for a write), or with a larger "
        "timeout_ms; if it persists an operator must check the gateway's database.",
    ),
    ErrorSpec(
        "R-UPSTREAM-429",
        _RETRY,
        "The backend is rate limiting",
        "Wait for details.retry_after_ms (when given) before retrying.",
    ),
    ErrorSpec(
        "R-UPSTREAM-UNAVAILABLE",
        _RETRY,
        "The backend is temporarily unavailable",
        "Retry with backoff; honour details.retry_after_ms when present.",
    ),
    ErrorSpec(
        "R-UPSTREAM-CONNECT",
        _RETRY,
        "The backend could not be reached",
        "Retry with backoff; if it persists an operator must check that the backend is running.",
    ),
    ErrorSpec(
        "R-CAP-CONCURRENCY",
        _RETRY,
        "Too many calls of this tool are in flight",
        "Retry after details.retry_after_ms.",
    ),
    ErrorSpec(
        "R-CAP-RATE-LIMITED",
        _RETRY,
        "The call is over a rate limit it falls under (requests per window, or calls at once)",
        "Retry after details.retry_after_ms (REST also sends Retry-After, RateLimit-Policy and RateLimit); "
        "details.limit_name names the limit, details.limit and details.window_s say what it allows. "
        "Spread calls out, or ask the operator for a higher limit (`limits:` in colonnade.yaml).",
    ),
    ErrorSpec(
        "R-CAP-KEY-IN-PROGRESS",
        _RETRY,
        "A call with this idempotency key is still running",
        "Send the same call again (same idempotency_key and input) after details.retry_after_ms: it then "
        "gets the running call's outcome; it is not run twice.",
    ),
    ErrorSpec(
        "R-CAP-STORE-UNAVAILABLE",
        _RETRY,
        "The gateway's database failed (connection lost, locked), so the call could not be claimed or "
        "audited; it did not run",
        "Retry after details.retry_after_ms (with the same idempotency_key for a write); if it persists an "
        "operator must check the gateway's database.",
    ),
    ErrorSpec(
        "R-CAP-STORE-UNRECORDED",
        _RETRY,
        "The call ran (its backend may have acted), but the gateway's database failed while recording it; "
        "its result is withheld",
        "Its effect may have happened: send the same call again with the same idempotency_key after "
        "details.retry_after_ms. The gateway answers the recorded outcome once its database is back and "
        "does not run the call a second time; never resend it with a new key.",
    ),
    ErrorSpec(
        "R-UPSTREAM-CIRCUIT-OPEN",
        _RETRY,
        "The backend keeps failing; the gateway stopped calling it for a while",
        "Retry after details.retry_after_ms, when the gateway tries the backend again; if it persists an "
        "operator must check the tool's backend (the gateway's log names it when its circuit opens).",
    ),
    ErrorSpec(
        "R-CAP-OVERLOAD",
        _RETRY,
        "The gateway is overloaded and refused the call at once",
        "Retry after details.retry_after_ms (REST also sends Retry-After), or with a later deadline; "
        "details.reason says whether the calls in flight were at their bound or the call would have "
        "missed its deadline.",
    ),
    ErrorSpec(
        "R-CAP-CONNECTIONS",
        _RETRY,
        "The gateway holds as many connections as it allows",
        "Retry after details.retry_after_ms on a new connection; keep one connection alive for many "
        "requests instead of opening one per request.",
    ),
    ErrorSpec(
        "R-CAP-SESSIONS",
        _RETRY,
        "Every MCP session this caller (or the gateway) may hold has a request in flight",
        "Retry after details.retry_after_ms (Retry-After says it in seconds), or end sessions you no longer "
        "use (HTTP DELETE with their Mcp-Session-Id); details.reason says whose bound (per_caller or total) "
        "was reached.",
    ),
    ErrorSpec(
        "R-CAP-SHUTTING-DOWN",
        _RETRY,
        "The gateway is stopping and ended the call before it finished",
        "Retry after details.retry_after_ms, with the same idempotency_key for a write: when "
        "details.interrupted is true the call was cut mid-flight and may have reached the backend.",
    ),
    ErrorSpec(
        "I-REQ-MEDIA-TYPE",
        _INVALID,
        "The request body is not declared as JSON",
        "Send the body with Content-Type: application/json (a charset, if any, must be utf-8); the same "
        "rule holds on REST and MCP.",
    ),
    ErrorSpec(
        "I-REQ-ENCODING",
        _INVALID,
        "The request body is not UTF-8",
        "Encode the JSON body as UTF-8 (not UTF-16 or UTF-32; details.offset names the first bad byte); a "
        "leading UTF-8 byte-order mark is accepted and dropped.",
    ),
    ErrorSpec(
        "I-REQ-DUPLICATE-KEY",
        _INVALID,
        "A JSON object in the request has the same key twice",
        "Send each key once per object (details.key names the repeated one): parsers disagree on which "
        "value wins, so the gateway refuses to guess.",
    ),
    ErrorSpec(
        "I-REQ-READ-TIMEOUT",
        _INVALID,
        "The request's headers or body did not arrive in time",
        "Send the headers within details.limit_s seconds of connecting (or of the previous answer) and "
        "the body right after them; the gateway disconnects clients that stall mid-request.",
    ),
    ErrorSpec(
        "I-REQ-HEADERS-TOO-LARGE",
        _INVALID,
        "The request line and headers are larger than the gateway accepts",
        "Send at most details.limit_bytes bytes of request line and headers; pass large data in the body.",
    ),
    ErrorSpec(
        "S-TOOL-UPSTREAM-FAULT",
        _TERMINAL,
        "The backend failed with a server error",
        "Retry only if the operation is idempotent; otherwise report the error to the API owner.",
    ),
    ErrorSpec(
        "S-TOOL-CONFIG",
        _TERMINAL,
        "The tool is misconfigured in the gateway",
        "An operator must fix the configuration named in error.message (e.g. set the missing secret).",
    ),
    ErrorSpec(
        "S-TOOL-PLATFORM-PART",
        _TERMINAL,
        "The platform tool needs a part this gateway does not run",
        "Start the gateway with the part error.message names (a database, authentication) or use "
        "another tool; the call did nothing.",
    ),
    ErrorSpec(
        "S-TOOL-UNAVAILABLE",
        _TERMINAL,
        "The tool is not healthy",
        "Retry later; an operator must check the tool's health.",
    ),
    ErrorSpec(
        "S-TOOL-COMMAND-UNADMITTED",
        _TERMINAL,
        "The server's pinned command changed on disk since it was admitted",
        "An operator must review the changed command and admit it (`colonnade servers admit SERVER @command`,"
        " two people) or restore the admitted file; the server does not start meanwhile.",
    ),
    ErrorSpec(
        "S-TOOL-SANDBOX-KILLED",
        _TERMINAL,
        "The server behind this tool was killed by its sandbox (memory, CPU time or process limit)",
        "Make the call ask for less, or raise the server's `sandbox` limits in colonnade.yaml.",
    ),
    ErrorSpec(
        "S-TOOL-INTERNAL",
        _TERMINAL,
        "The gateway failed while running the call",
        "Report the call_id and trace_id to the gateway operator.",
    ),
    ErrorSpec(
        "S-TOOL-ORGAN-LOAD",
        _TERMINAL,
        "The organ behind this tool cannot be loaded, or no longer fits its card",
        "An operator must fix what error.message names: the module on the Python path (organs.import_paths), "
        "or stale cards (re-export them with `colonnade cards export MODULE -o FOLDER` and restart).",
    ),
    ErrorSpec(
        "S-TOOL-ORGAN-UNSUPPORTED",
        _TERMINAL,
        "The organ does not answer the operation its card lists",
        "An operator must re-export the organ's cards (`colonnade cards export`) so they match its code.",
    ),
    ErrorSpec(
        "S-TOOL-ORGAN-FAULT",
        _TERMINAL,
        "The organ failed while answering (a bug in the organ)",
        "Report the call_id and trace_id to the organ's author (card: author, repository); the gateway log "
        "has the exception's type and frames.",
    ),
    ErrorSpec(
        "S-TOOL-EFFECT-UNKNOWN",
        _TERMINAL,
        "An earlier attempt with this idempotency key was interrupted; whether it took effect is unknown",
        "Do not resend with this key: find out whether the effect happened (read the resource, or reconcile "
        "with the backend's records), then call again with a new idempotency_key only if it did not.",
    ),
    ErrorSpec(
        "S-TOOL-EFFECT-UNKNOWN-NO-KEY",
        _TERMINAL,
        "A call that is not idempotent failed after its backend may have acted, and it had no idempotency "
        "key; whether it took effect is unknown",
        "Do not repeat it as is: find out whether the effect happened (read the resource, or reconcile with "
        "the backend's records; details.cause is the failure) and call again only if it did not, with a "
        "constraints.idempotency_key, so that an interrupted call can be told from a new one.",
    ),
    ErrorSpec(
        "D-DATA-OUTPUT-SCHEMA",
        _TERMINAL,
        "The tool's output does not match its output schema",
        "Report to the API owner: the backend's response breaks the contract's output_schema.",
    ),
    ErrorSpec(
        "D-DATA-GUARDRAIL-BLOCKED",
        _TERMINAL,
        "The tool's result carried data a guardrail blocks, so it was withheld",
        "The tool ran (its effect stands); details.findings names the kinds and paths found. Ask the API "
        "owner to stop returning it, or an operator to redact instead (`guardrails.results`).",
    ),
    ErrorSpec(
        "D-DATA-CHECKSUM",
        _TERMINAL,
        "The backend's answer does not match the digest it stated",
        "Retry once; if it persists, report to the API owner: the body was altered or truncated in transit.",
    ),
    ErrorSpec(
        "D-DATA-MALFORMED",
        _TERMINAL,
        "The backend returned a body that cannot be parsed, or an MCP result that is not a valid one",
        "Report to the API owner (for an MCP server, its maintainer): the response is not valid JSON, "
        "or not a valid tools/call result (the message names the part).",
    ),
    ErrorSpec(
        "S-TOOL-UPSTREAM-ERROR",
        _TERMINAL,
        "The downstream MCP tool reported an error",
        "Read the tool's own message in error.message, correct the arguments or request, then call again.",
    ),
    ErrorSpec(
        "P-PRECOND-INPUT-REQUIRED",
        _TERMINAL,
        "The tool needs input from the user before it can finish",
        "Call it from an MCP client that can answer (one that declares elicitation, or sampling/roots if "
        "asked: over stdio, at 2026-07-28, or in a 2025-11-25 HTTP session that declares it at initialize); "
        "REST cannot ask the user.",
    ),
    ErrorSpec(
        "I-REQ-UNKNOWN-ROUTE",
        _INVALID,
        "No route of the gateway has this path",
        "Check the path against docs/rest-api.md (REST under /v1, MCP at /mcp, pages under /ui); "
        "details.path is the path asked for.",
    ),
    ErrorSpec(
        "I-REQ-METHOD",
        _INVALID,
        "The route exists but does not take this HTTP method",
        "Send one of the methods in details.allowed (also in the Allow header).",
    ),
    ErrorSpec(
        "I-REQ-UNKNOWN-SERVER",
        _INVALID,
        "No downstream MCP server has this name",
        "List the servers (GET /v1/servers or `colonnade servers list`) and use a name exactly as listed.",
    ),
    ErrorSpec(
        "I-REQ-SERVER-CONFIG",
        _INVALID,
        "The downstream server's definition is invalid",
        "Fix each field listed in details.problems (see docs/servers.md), then send the definition again.",
    ),
    ErrorSpec(
        "I-REQ-SERVER-EXISTS",
        _INVALID,
        "A downstream server with this name is configured already",
        "Remove it first (DELETE /v1/servers/{name}) or give the new server another name.",
    ),
    ErrorSpec(
        "I-REQ-TOOL-NOT-PARKED",
        _INVALID,
        "No tool of this downstream server waits for admission under this name",
        "List what waits (`colonnade servers pin NAME`, GET /v1/servers/{name}/admission); details.waiting "
        "names the parked tools.",
    ),
    ErrorSpec(
        "A-AUTH-ADMISSION-SELF",
        _TERMINAL,
        "This person already approved the parked tool; a second, different person must",
        "Ask another administrator to approve it (`colonnade servers admit NAME TOOL`); four-eyes admission "
        "needs two different people.",
    ),
    ErrorSpec(
        "A-AUTH-ADMISSION-BLOCKED",
        _TERMINAL,
        "The parked tool is blocked by the server's poisoning policy",
        "Read the findings (`colonnade servers diff NAME TOOL`); the server must change the definition, or "
        "the operator sets `poisoning: approve` for the server and restarts the gateway.",
    ),
    ErrorSpec(
        "A-AUTH-ADMIN",
        _TERMINAL,
        "Administering downstream servers over HTTP is turned off",
        "Edit `servers:` in colonnade.yaml and restart the gateway, or set server.admin_api: true where "
        "every caller of this gateway may start processes on its host.",
    ),
    ErrorSpec(
        "I-REQ-ROUTING-META",
        _INVALID,
        "The routing hints in _meta are malformed",
        "Fix the field of _meta['colonnade/routing'] the message names, or leave the hints out.",
    ),
    ErrorSpec(
        "I-REQ-BENCHMARK",
        _INVALID,
        "A routing benchmark file cannot be read",
        "Fix the file and line the message names (one JSON object per line with id, query and gold tools).",
    ),
    ErrorSpec(
        "C-CONTRACT-LOAD",
        _TERMINAL,
        "A contract file cannot be read or parsed",
        "Fix the syntax error at the line and column given (YAML or JSON), or the path, and load it again.",
    ),
    ErrorSpec(
        "C-CONTRACT-INVALID",
        _TERMINAL,
        "A contract has validation errors",
        "Run `colonnade contract validate FILE` and fix every error-severity finding; each has a fix.",
    ),
    ErrorSpec(
        "C-CONTRACT-TOO-COMPLEX",
        _TERMINAL,
        "A contract document nests too deeply or is too large",
        "Flatten the document (no YAML alias bombs, fewer nested levels) and load it again.",
    ),
    ErrorSpec(
        "C-CONTRACT-OPENAPI",
        _TERMINAL,
        "An OpenAPI document cannot be imported, or a contract cannot be exported to OpenAPI",
        "Fix the part of the document the message points at (a JSON pointer), then import it again.",
    ),
    ErrorSpec(
        "C-CONTRACT-CATALOG",
        _TERMINAL,
        "The catalog refused a change",
        "Follow the fix the message gives for the tool or API it names.",
    ),
    ErrorSpec(
        "C-CONTRACT-TOOL-NAME",
        _TERMINAL,
        "A canonical tool name is not tenant:api:tool",
        "Use 'tenant:api:tool' with three non-empty segments (no ':' in tenant or api).",
    ),
    ErrorSpec(
        "C-CONTRACT-WIRE-COLLISION",
        _TERMINAL,
        "Two tools would share one wire name",
        "Rename one of the tools (e.g. a different llm.tool_name).",
    ),
    ErrorSpec(
        "C-CONTRACT-DUPLICATE-TOOL",
        _TERMINAL,
        "One contract projects two operations onto the same tool name",
        "Give each operation a distinct llm.tool_name (or operation_id).",
    ),
    ErrorSpec(
        "C-CONTRACT-TOOL-CONFLICT",
        _TERMINAL,
        "A tool name is already provided by another source",
        "Remove the other source first, or rename the tool.",
    ),
    ErrorSpec(
        "C-CONTRACT-UNKNOWN",
        _TERMINAL,
        "No contract, API version or tool source has this name",
        "List what is stored (`colonnade contract list`) and use a name and version exactly as listed.",
    ),
    ErrorSpec(
        "C-CONTRACT-IMMUTABLE",
        _TERMINAL,
        "A published contract version cannot change",
        "Bump the contract's version (published versions are immutable) and publish it again.",
    ),
    ErrorSpec(
        "S-TOOL-CONFIG-FILE",
        _TERMINAL,
        "The gateway's configuration is invalid",
        "Fix the setting the message names in colonnade.yaml or its COLONNADE_* variable.",
    ),
    ErrorSpec(
        "S-TOOL-CONFIG-MANIFEST",
        _TERMINAL,
        "A tool manifest file is unreadable or invalid",
        "Fix each problem listed for the manifest file, then restart the gateway.",
    ),
    ErrorSpec(
        "S-TOOL-CONFIG-ORGAN",
        _TERMINAL,
        "An organ card is unreadable or invalid",
        "Run `colonnade cards validate FOLDER` and fix every error finding (or export the cards again).",
    ),
    ErrorSpec(
        "S-TOOL-CONFIG-PATHWAY",
        _TERMINAL,
        "A pathway file is unreadable or names an operation no served organ has",
        "Fix the file and step the message names; each step is `organ.op` of an organ in organs.cards.",
    ),
    ErrorSpec(
        "S-TOOL-STORE",
        _TERMINAL,
        "The gateway's database refused an operation",
        "Check that the database is reachable and migrated (`colonnade serve` migrates it).",
    ),
    ErrorSpec(
        "S-TOOL-STORE-URL",
        _TERMINAL,
        "The database URL is malformed or names an unsupported driver",
        "Use sqlite+aiosqlite:///PATH or postgresql+asyncpg://USER@HOST:PORT/DB.",
    ),
    ErrorSpec(
        "S-TOOL-STORE-SCHEMA",
        _TERMINAL,
        "The database schema cannot be brought to this version of Colonnade",
        "Upgrade Colonnade to at least the version that last migrated this database, or use a new database.",
    ),
    ErrorSpec(
        "S-TOOL-ROUTING-INDEX",
        _TERMINAL,
        "A saved routing index cannot be used",
        "Delete the index folder the message names; the gateway rebuilds it from the catalog.",
    ),
)

REGISTRY: dict[str, ErrorSpec] = {spec.code: spec for spec in _SPECS}


class UnregisteredCode(KeyError):
    """A code that is not in the registry: a programming error, so it fails loudly (and in tests)."""


def spec_for(code: str) -> ErrorSpec:
    """The registered spec of a code; an unknown code raises `UnregisteredCode`."""
    try:
        return REGISTRY[code]
    except KeyError:
        raise UnregisteredCode(f"error code {code!r} is not in the registry (calls/call_errors.py)") from None


def error(code: str, message: str | None = None, **details: Any) -> tuple[CallStatus, CallError]:
    """Build the status and error body for a registered code."""
    spec = spec_for(code)
    return spec.status, CallError(
        code=spec.code, message=message or spec.title, details=details, fix=spec.fix
    )
