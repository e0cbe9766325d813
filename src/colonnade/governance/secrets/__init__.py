"""Secrets with scope and rotation: providers (environment, files, the sealed store), the resolver
adapters get, and the admin service behind `colonnade secrets`."""

from __future__ import annotations

from colonnade.governance.secrets.admin import SecretAdmin, SecretView, secret_view
from colonnade.governance.secrets.providers import EnvProvider, FileProvider, SecretsProvider
from colonnade.governance.secrets.resolver import Secrets
from colonnade.governance.secrets.vault import SecretVault, scope_of, seal_context

__all__ = [
    "EnvProvider",
    "FileProvider",
    "SecretAdmin",
    "SecretVault",
    "SecretView",
    "Secrets",
    "SecretsProvider",
    "scope_of",
    "seal_context",
    "secret_view",
]
