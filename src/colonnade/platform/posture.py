"""The security posture checks of `security_score` and the findings of `scan_vulnerabilities`.

Each check reads what the gateway serves and how it is configured, and says why it passes or
fails and what to change. Checks see only the tools the caller may see (its tenant's).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from ipaddress import ip_address
from urllib.parse import urlsplit

from colonnade.catalog.bindings import HttpBinding, McpBinding
from colonnade.catalog.tool import Tool
from colonnade.contracts.model import SideEffects
from colonnade.contracts.secrets import find_secrets
from colonnade.governance.principal import Principal
from colonnade.platform.services import PlatformServices

__all__ = ["KEY_ROTATION_DAYS", "Check", "Finding", "posture_checks", "scan_tools"]

KEY_ROTATION_DAYS = 90
_WIDE = re.compile(r"^[^:*]+:\*$|^[^:*]+:[^:]*\*[^:]*:\*$|^\*")
_SUSPICIOUS = re.compile(
    r"ignore (all |any )?(previous|prior|above|earlier) (instructions|prompts?)|<\s*important\s*>|"
    r"do not (tell|inform|mention)|system prompt|exfiltrat|before using this tool|"
    r"(send|post|upload) .{0,40}(to|at) https?://|conversation history|"
    r"\bapi[_ ]?keys?\b.{0,30}(send|include|pass)",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    ok: bool
    weight: int
    reason: str
    fix: str = ""


@dataclass(frozen=True, slots=True)
class Finding:
    kind: str
    severity: str
    subject: str
    message: str
    fix: str


def _loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ip_address(host).is_loopback
    except ValueError:
        return False


def _http_tools(tools: Iterable[Tool]) -> list[tuple[Tool, HttpBinding]]:
    return [(tool, tool.binding) for tool in tools if isinstance(tool.binding, HttpBinding)]


async def posture_checks(services: PlatformServices, principal: Principal, tools: list[Tool]) -> list[Check]:
    settings = services.settings
    http = _http_tools(tools)
    checks = [
        Check(
            "authentication",
            settings.auth.configured,
            25,
            "every HTTP surface (MCP, REST, pages) needs a credential"
            if settings.auth.configured
            else "no authentication: every caller is the loopback user",
            ""
            if settings.auth.configured
            else "configure auth: (issuers or api_keys) before exposing the gateway",
        ),
        Check(
            "tls",
            settings.server.tls.cert_file is not None,
            10,
            "the gateway serves https" if settings.server.tls.cert_file else "the gateway serves plain http",
            ""
            if settings.server.tls.cert_file
            else "set server.tls.cert_file (or terminate TLS in front of it)",
        ),
    ]
    destructive = [tool for tool in tools if tool.side_effects is SideEffects.DESTRUCTIVE]
    parked = services.contracts is not None
    checks.append(
        Check(
            "destructive_tools_approved",
            parked or not destructive,
            15,
            f"{len(destructive)} destructive tool(s), each parked for a human's approval"
            if parked
            else f"{len(destructive)} destructive tool(s) and no database to park them: they are refused",
            "" if parked or not destructive else "run the gateway with a database so approvals can be asked",
        )
    )
    if services.agents is not None:
        wide = [
            a.id
            for a in await services.agents.list(principal)
            if a.revoked_at is None and _wide(a.allowed_tools)
        ]
        checks.append(
            Check(
                "agent_allow_lists",
                not wide,
                15,
                f"agents allowed a whole tenant or API by glob: {', '.join(wide)}"
                if wide
                else "no agent has a wide allow-list",
                "name the tools an agent needs instead of tenant:* (colonnade agents)" if wide else "",
            )
        )
    if services.keys is not None:
        old = datetime.now(UTC) - timedelta(days=KEY_ROTATION_DAYS)
        stale = [
            k.id
            for k in await services.keys.list(principal)
            if k.revoked_at is None
            and k.created_at < old
            and (k.expires_at is None or k.expires_at > datetime.now(UTC))
        ]
        checks.append(
            Check(
                "keys_rotated",
                not stale,
                10,
                f"{len(stale)} active key(s) older than {KEY_ROTATION_DAYS} days: {', '.join(stale[:10])}"
                if stale
                else f"every active key is younger than {KEY_ROTATION_DAYS} days",
                "rotate them (colonnade__rotate_api_key or colonnade keys rotate)" if stale else "",
            )
        )
    unauthenticated = sorted({f"{tool.tenant}:{tool.api}" for tool, binding in http if binding.auth is None})
    checks.append(
        Check(
            "backends_authenticated",
            not unauthenticated,
            10,
            f"APIs whose backend gets no credential: {', '.join(unauthenticated)}"
            if unauthenticated
            else "every API backend gets a credential",
            "give the contract's backend an auth: block" if unauthenticated else "",
        )
    )
    plain = sorted(
        {
            f"{tool.tenant}:{tool.api}"
            for tool, binding in http
            if binding.base_url.startswith("http://") and not _loopback(binding.base_url)
        }
    )
    checks.append(
        Check(
            "backends_https",
            not plain,
            10,
            f"APIs whose backend is plain http beyond loopback: {', '.join(plain)}"
            if plain
            else "every remote backend is https",
            "serve the backend over https and change its base_url" if plain else "",
        )
    )
    federated = [tool for tool in tools if isinstance(tool.binding, McpBinding)]
    checks.append(
        Check(
            "federated_tools_pinned",
            not federated,
            5,
            f"{len(federated)} federated tool(s); this gateway does not pin their definitions at admission"
            if federated
            else "no federated tools",
            "review each server's tools (colonnade servers) and allow only those you need"
            if federated
            else "",
        )
    )
    return checks


def _wide(patterns: Iterable[str]) -> bool:
    return any(_WIDE.match(pattern) for pattern in patterns)


def scan_tools(tools: Iterable[Tool]) -> list[Finding]:
    findings: list[Finding] = []
    for tool in tools:
        findings.extend(_url_findings(tool))
        findings.extend(_effect_findings(tool))
        findings.extend(_description_findings(tool))
    return findings


def _url_findings(tool: Tool) -> list[Finding]:
    binding = tool.binding
    url = (
        binding.base_url
        if isinstance(binding, HttpBinding)
        else binding.url
        if isinstance(binding, McpBinding)
        else None
    )
    if not url:
        return []
    parts = urlsplit(url)
    secrets = find_secrets(url)
    if parts.password or secrets or any(key in parts.query.lower() for key in ("key=", "token=", "secret=")):
        return [
            Finding(
                "credential_in_url",
                "error",
                tool.canonical_name,
                "the backend URL carries a credential (user:password, a token or a key parameter)",
                "move it to the backend's auth block (a secret reference), not the URL",
            )
        ]
    return []


def _effect_findings(tool: Tool) -> list[Finding]:
    binding = tool.binding
    if not isinstance(binding, HttpBinding):
        return []
    method = binding.method.upper()
    reads = tool.side_effects in (SideEffects.NONE, SideEffects.READ)
    if method == "DELETE" and tool.side_effects is not SideEffects.DESTRUCTIVE:
        return [
            Finding(
                "unsafe_side_effects",
                "error" if reads else "warning",
                tool.canonical_name,
                f"a DELETE operation declared side_effects: {tool.side_effects.value}: it is not gated "
                f"for approval",
                "declare side_effects: destructive (or explain why deleting is harmless)",
            )
        ]
    if method in ("POST", "PUT", "PATCH") and reads:
        return [
            Finding(
                "unsafe_side_effects",
                "warning",
                tool.canonical_name,
                f"a {method} operation declared side_effects: {tool.side_effects.value}: it may be "
                f"retried as if safe",
                "declare side_effects: write (or destructive) unless the operation only reads",
            )
        ]
    return []


def _description_findings(tool: Tool) -> list[Finding]:
    text = " ".join([tool.title, tool.description, tool.summary])
    hidden = [ch for ch in text if unicodedata.category(ch) == "Cf"]
    if _SUSPICIOUS.search(text) is None and not hidden:
        return []
    why = (
        "invisible format characters"
        if hidden and _SUSPICIOUS.search(text) is None
        else "instructions aimed at the model"
    )
    return [
        Finding(
            "suspicious_description",
            "error",
            tool.canonical_name,
            f"the tool's description holds {why} (a tool-poisoning pattern)",
            "rewrite the description to say what the tool does; deny the tool until it is reviewed",
        )
    ]
