"""The gateway's governance parts, built from the settings in one place: who calls, what they may
do (authorization, then the Rego policy gate), and the audit log that records both.

Without a database there is no audit log and no keys, agents or subscriptions (stateless parts
only, as in surface tests); without `auth` configured the authorizer allows everything and the
HTTP edge lets every (loopback) caller in anonymously. With `auth` configured, every HTTP route
but the probes and the resource metadata needs a credential, and `ToolAccess` decides.

Changes made here (a key revoked or rotated, an agent registered or revoked, a subscription
changed, a policy reload asked for) are published on the change fan-out once they are stored;
`follow()` applies the other replicas' changes. The poll (`run()`) stays as the fallback.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
from pathlib import Path

from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.calls.approvals import ApprovalDesk, ApprovalSigner
from colonnade.calls.approvals.signing import KEY_FILE as APPROVAL_KEY_FILE
from colonnade.catalog.catalog import Catalog
from colonnade.config import IssuerSettings, Settings
from colonnade.governance.agent_admin import AgentAdmin
from colonnade.governance.attestation import AttestationVerifier
from colonnade.governance.audit import AuditLog
from colonnade.governance.authorization import AllowAll, Authorizer
from colonnade.governance.identity import Authenticator, RouteScopes
from colonnade.governance.identity.agent_book import AgentBook
from colonnade.governance.identity.api_keys import ApiKeys
from colonnade.governance.identity.claim_mapping import ClaimMapping
from colonnade.governance.identity.delegated_tokens import DelegatedTokens
from colonnade.governance.identity.delegation import TokenExchange, delegation_issuer
from colonnade.governance.identity.delegation_actor import ActorTokens
from colonnade.governance.identity.delegation_signing import DELEGATION_ALGORITHM, DelegationSigner
from colonnade.governance.identity.delegation_signing import KEY_FILE as DELEGATION_KEY_FILE
from colonnade.governance.identity.dev_issuer import DEV_ALGORITHM, DEV_ISSUER, DevIssuer
from colonnade.governance.identity.dpop import DpopVerifier, FirstUse, ProofsSeen
from colonnade.governance.identity.exposure import AuthConfigError, resource_url
from colonnade.governance.identity.issuer_keys import IssuerKeys, jwks_url_problem
from colonnade.governance.identity.standing import Standing
from colonnade.governance.identity.tokens import TokenVerifier, TrustedIssuer
from colonnade.governance.key_admin import KeyAdmin
from colonnade.governance.personas import Scope
from colonnade.governance.policy.gate import PolicyGate
from colonnade.governance.secrets import (
    EnvProvider,
    FileProvider,
    SecretAdmin,
    Secrets,
    SecretsProvider,
    SecretVault,
)
from colonnade.governance.subscriptions import SubscriptionAdmin, SubscriptionBook
from colonnade.governance.tool_access import ToolAccess
from colonnade.shared_state import Change, Fanout
from colonnade.shared_state.topics import (
    AGENT_CHANGED,
    KEY_CHANGED,
    POLICY_RELOADED,
    SECRET_CHANGED,
    SUBSCRIPTION_CHANGED,
)
from colonnade.store.agents_repo import AgentStore
from colonnade.store.api_keys_repo import ApiKeyStore
from colonnade.store.approvals_repo import ApprovalStore
from colonnade.store.audit_repo import AuditStore
from colonnade.store.dpop_replay_repo import DpopReplayStore
from colonnade.store.sealing import Sealer, sealer_for
from colonnade.store.secrets_repo import SecretVersionStore
from colonnade.store.subscriptions_repo import SubscriptionStore

__all__ = ["ROUTE_SCOPES", "Governance", "approval_signer", "audit_key", "dev_issuer_keys", "sealer"]

logger = logging.getLogger(__name__)

ROUTE_SCOPES: RouteScopes = (
    ("/metrics", Scope.METRICS_READ),
    ("/ui/metrics", Scope.METRICS_READ),
    ("/ui", Scope.CATALOG_READ),
    ("/v1/tools", Scope.CATALOG_READ),
    ("/v1/keys", Scope.SECURITY_READ),
    ("/v1/agents", Scope.SECURITY_READ),
    ("/v1/secrets", Scope.SECURITY_READ),
    ("/v1/subscriptions", Scope.SUBSCRIPTIONS_READ),
    ("/v1/approvals", Scope.CATALOG_READ),
    ("/v1/policy", Scope.SECURITY_READ),
    ("/register", Scope.SECURITY_WRITE),
)
"""What each route needs beyond a valid credential (finer checks live in the services)."""
_PURGE_EVERY_S = 300.0


def audit_key(settings: Settings) -> bytes:
    """The audit log's secret key: the configured file, or data_dir/audit.key made on first use."""
    path = settings.audit.key_file or settings.data_dir / "audit.key"
    return _secret_file(path)


def sealer(settings: Settings) -> Sealer:
    """The key ring that seals what the gateway keeps at rest: `vault.key_ring_env`, `vault.key_ring_file`,
    else data_dir/seal-keys.json (made on first use)."""
    vault = settings.vault
    return sealer_for(settings.data_dir, key_ring_file=vault.key_ring_file, key_ring_env=vault.key_ring_env)


def approval_signer(settings: Settings) -> ApprovalSigner:
    """The approval tokens' signing key: the configured file, or data_dir/approval-signing.jwk."""
    return ApprovalSigner.load_or_create(
        settings.approvals.key_file or settings.data_dir / APPROVAL_KEY_FILE,
        overlap_s=settings.vault.signing_overlap_s,
    )


def dev_issuer_keys(dev: DevIssuer) -> IssuerKeys:
    """The development issuer's public keys, read from its ring as it rotates (no network)."""

    async def ring_jwks(_: str) -> dict[str, object]:
        return {"keys": dev.public_jwks()}

    # The ring file is the key source: a token with a kid not seen yet looks again at once (a stat;
    # the file is parsed again only when it changed), so a made-up kid costs no more than that.
    return IssuerKeys(jwks_url=f"file:{dev.keys.path}", fetch=ring_jwks, cache_s=5.0, refetch_min_s=0.0)


class Governance:
    """The governance parts of one gateway; `authorizer` given (tests) replaces the settings' choice."""

    def __init__(
        self,
        settings: Settings,
        catalog: Catalog,
        engine: AsyncEngine | None = None,
        authorizer: Authorizer | None = None,
        changes: Fanout | None = None,
    ) -> None:
        self.settings = settings
        self.catalog = catalog
        self.changes = changes
        self.agents = AgentBook()
        self.subscription_book = SubscriptionBook()
        auth = settings.auth
        self.resource = resource_url(settings) if auth.configured else None
        self.audit: AuditLog | None = None
        self.api_keys: ApiKeys | None = None
        self.key_admin: KeyAdmin | None = None
        self.agent_store: AgentStore | None = None
        self.agent_admin: AgentAdmin | None = None
        self.subscription_admin: SubscriptionAdmin | None = None
        self.replay: DpopReplayStore | None = None
        self.approvals: ApprovalDesk | None = None
        self.standing: Standing | None = None
        self.vault: SecretVault | None = None
        self.secret_admin: SecretAdmin | None = None
        if engine is not None:
            secret_store = SecretVersionStore(engine)
            self.vault = SecretVault(secret_store, sealer(settings), cache_s=settings.vault.cache_s)
            self.audit = AuditLog(AuditStore(engine), audit_key(settings))
            keys = ApiKeyStore(engine)
            self.api_keys = ApiKeys(keys, cache_s=auth.api_key_cache_s) if auth.api_keys else None
            self.key_admin = KeyAdmin(
                keys, self.audit, overlap_s=auth.api_key_rotation_overlap_s, on_change=self._key_changed
            )
            self.agent_store = AgentStore(engine)
            self.agent_admin = AgentAdmin(self.agent_store, self.audit, on_change=self._agents_changed)
            self.standing = Standing(keys, self.agent_store, safe_for_agents=self._safe_for_agents)
            self.subscription_admin = SubscriptionAdmin(
                SubscriptionStore(engine),
                catalog,
                self.subscription_book,
                self.audit,
                approval=auth.subscription_approval,
                on_change=self._subscription_changed,
            )
            self.replay = DpopReplayStore(engine)
            self.approvals = ApprovalDesk(
                ApprovalStore(engine), approval_signer(settings), settings.approvals, self.audit
            )
        if self.vault is not None:
            self.secret_admin = SecretAdmin(
                secret_store,
                self.vault,
                self.audit,
                overlap_s=settings.vault.rotation_overlap_s,
                on_change=self._secret_changed,
            )
        providers: dict[str, SecretsProvider] = {"env": EnvProvider(), "file": FileProvider()}
        if self.vault is not None:
            providers["store"] = self.vault
        self.secrets = Secrets(providers)
        """What adapters resolve secrets with (env, file, and the store when there is a database)."""
        if authorizer is not None:
            self.authorizer: Authorizer = authorizer
        elif auth.configured:
            self.authorizer = ToolAccess(catalog, self.subscription_book.active)
        else:
            self.authorizer = AllowAll()
        self.proofs_seen: FirstUse = self.replay.first_use if self.replay is not None else ProofsSeen()
        policy = settings.policy
        # No policy files, no gate: a call pays for Rego only when someone wrote a policy for it.
        wanted = policy.enabled and (policy.builtin or bool(policy.directories))
        self.policy = PolicyGate.from_settings(policy) if wanted else None
        self.attestation = AttestationVerifier(
            self.agents, self.proofs_seen, window_s=settings.policy.attestation_window_s
        )
        self.delegation_signer: DelegationSigner | None = None
        self.token_exchange: TokenExchange | None = None
        if auth.configured and auth.delegation.enabled:
            key_file = auth.delegation.key_file or settings.data_dir / DELEGATION_KEY_FILE
            self.delegation_signer = DelegationSigner.load_or_create(key_file)
        self.authenticator = self._authenticator() if auth.configured else None
        if self.authenticator is not None and self.delegation_signer is not None:
            assert self.resource is not None
            self.token_exchange = TokenExchange(
                auth.delegation,
                issuer=delegation_issuer(self.resource),
                audience=self.resource,
                signer=self.delegation_signer,
                authenticator=self.authenticator,
                actors=ActorTokens(self.agents, self.proofs_seen, leeway_s=auth.leeway_s),
                audit=self.audit,
                safe_for_agents=self._safe_for_agents,
            )

    def _authenticator(self) -> Authenticator:
        auth = self.settings.auth
        assert self.resource is not None
        issuers = [self._issuer(issuer) for issuer in auth.issuers]
        if auth.dev_issuer:
            dev = DevIssuer.load_or_create(
                self.settings.data_dir, overlap_s=self.settings.vault.signing_overlap_s
            )
            keys = dev_issuer_keys(dev)
            issuers.append(TrustedIssuer(DEV_ISSUER, keys, frozenset({DEV_ALGORITHM}), self.resource))
        delegated = self._delegated(issuers)
        return Authenticator(
            ClaimMapping(auth.claims, self.agents, agent_token_max_s=auth.agent_token_max_s),
            tokens=TokenVerifier(issuers, leeway_s=auth.leeway_s) if issuers else None,
            api_keys=self.api_keys,
            dpop=DpopVerifier(self.proofs_seen, window_s=auth.dpop_window_s),
            route_scopes=ROUTE_SCOPES,
            audit=self.audit,
            delegated=delegated,
        )

    def _delegated(self, issuers: list[TrustedIssuer]) -> DelegatedTokens | None:
        """The gateway's own delegation issuer, trusted beside the others (its tokens read as chains)."""
        signer, auth = self.delegation_signer, self.settings.auth
        if signer is None:
            return None
        assert self.resource is not None
        if not (auth.issuers or auth.dev_issuer):
            raise AuthConfigError(
                "auth.delegation.enabled exchanges tokens the gateway accepts: configure auth.issuers "
                "or auth.dev_issuer too"
            )
        issuer = delegation_issuer(self.resource)
        if any(trusted.issuer == issuer for trusted in issuers):
            raise AuthConfigError(f"auth.issuers names {issuer!r}, the gateway's own delegation issuer")
        keys = IssuerKeys(keys=signer.public_jwks())
        issuers.append(TrustedIssuer(issuer, keys, frozenset({DELEGATION_ALGORITHM}), self.resource))
        delegation = auth.delegation
        return DelegatedTokens(
            issuer, self.agents, delegation.max_depth, delegation.max_ttl_s, self._safe_for_agents
        )

    def _safe_for_agents(self, name: str) -> bool:
        tool = self.catalog.get(name)
        return tool is not None and tool.safe_for_agents

    def _issuer(self, issuer: IssuerSettings) -> TrustedIssuer:
        assert self.resource is not None
        if issuer.jwks_url is not None:
            problem = jwks_url_problem(issuer.jwks_url)
            if problem is not None:
                raise AuthConfigError(f"auth.issuers[{issuer.issuer!r}]: {problem}")
            keys = IssuerKeys(jwks_url=issuer.jwks_url, cache_s=self.settings.auth.jwks_cache_s)
        else:
            keys = IssuerKeys(keys=issuer.keys)
        audience = issuer.audience or self.resource
        return TrustedIssuer(issuer.issuer, keys, frozenset(issuer.algorithms), audience)

    async def _key_changed(self, key_id: str) -> None:
        if self.api_keys is not None:
            self.api_keys.forget(key_id)
        await self._tell(KEY_CHANGED, {"key_id": key_id})

    async def _agents_changed(self) -> None:
        await self.refresh_agents()
        await self._tell(AGENT_CHANGED, {})

    async def _secret_changed(self, name: str) -> None:
        await self._tell(SECRET_CHANGED, {"name": name})

    async def _subscription_changed(self, subscription_id: str) -> None:
        await self._tell(SUBSCRIPTION_CHANGED, {"subscription_id": subscription_id})

    async def _tell(self, topic: str, payload: dict[str, object]) -> None:
        if self.changes is not None:
            await self.changes.publish(topic, payload)

    async def reload_policy(self) -> bool:
        """Reload the policy files on request and have every replica reload theirs (False: kept the set)."""
        if self.policy is None:
            return False
        reloaded = await self.policy.reload()
        if reloaded:
            await self._tell(POLICY_RELOADED, {"version": self.policy.version})
        return reloaded

    def follow(self, changes: Fanout) -> None:
        """Apply the governance changes other replicas publish (a resync re-reads everything)."""
        changes.subscribe(KEY_CHANGED, self._on_key_changed)
        changes.subscribe(AGENT_CHANGED, self._on_agents_changed)
        changes.subscribe(SUBSCRIPTION_CHANGED, self._on_subscriptions_changed)
        changes.subscribe(POLICY_RELOADED, self._on_policy_reloaded)
        changes.subscribe(SECRET_CHANGED, self._on_secret_changed)

    async def _on_key_changed(self, change: Change) -> None:
        if self.api_keys is None:
            return
        key_id = change.payload.get("key_id")
        if change.resync or not isinstance(key_id, str):
            self.api_keys.forget_all()
        else:
            self.api_keys.forget(key_id)

    async def _on_secret_changed(self, change: Change) -> None:
        if self.vault is not None:
            self.vault.forget()

    async def _on_agents_changed(self, change: Change) -> None:
        await self.refresh_agents()

    async def _on_subscriptions_changed(self, change: Change) -> None:
        if self.subscription_admin is not None:
            await self.subscription_admin.refresh()

    async def _on_policy_reloaded(self, change: Change) -> None:
        if self.policy is not None and (not change.resync or self.policy.changed()):
            await self.policy.reload()

    async def refresh_agents(self) -> None:
        if self.agent_store is not None:
            self.agents.replace(await self.agent_store.list())

    async def refresh(self) -> None:
        """Re-read what other processes may have changed: agents and subscriptions."""
        await self.refresh_agents()
        if self.subscription_admin is not None:
            await self.subscription_admin.refresh()

    async def run(self) -> None:
        """While serving: pick up changes made elsewhere; forget DPoP proofs too old to replay."""
        since_purge = 0.0
        interval = self.settings.catalog_poll_s
        while True:
            await asyncio.sleep(interval)
            since_purge += interval
            try:
                await self.refresh()
                if self.replay is not None and since_purge >= _PURGE_EVERY_S:
                    since_purge = 0.0
                    await self.replay.purge_expired()
            except Exception as exc:  # the store may be briefly unavailable; the next round retries
                logger.warning("refreshing agents and subscriptions failed: %s", type(exc).__name__)

    async def aclose(self) -> None:
        if self.api_keys is not None:
            await self.api_keys.aclose()
        if self.audit is not None:
            await self.audit.aclose()
            with contextlib.suppress(Exception):
                await self.audit.store.aclose()


def _secret_file(path: Path, size: int = 32) -> bytes:
    """The bytes of a secret key file, created (readable by its owner only) when missing."""
    if path.exists():
        return path.read_bytes()
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it first
        return path.read_bytes()
    key = secrets.token_bytes(size)
    with os.fdopen(descriptor, "wb") as sink:
        sink.write(key)
    return key
