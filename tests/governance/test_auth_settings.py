"""The auth settings: what turns authentication on, what an issuer needs, and COLONNADE_TOKEN
being a client credential rather than a setting."""

from __future__ import annotations

import pytest

from colonnade.config import AuthSettings, ConfigError, IssuerSettings, load_settings


def test_colonnade_token_is_not_read_as_a_setting() -> None:
    settings = load_settings(environ={"COLONNADE_TOKEN": "col_x", "COLONNADE_AUTH__DEV_ISSUER": "true"})
    assert settings.auth.dev_issuer and settings.auth.configured


@pytest.mark.parametrize(
    ("auth", "configured"),
    [
        (AuthSettings(), False),
        (AuthSettings(enabled=True), True),
        (AuthSettings(dev_issuer=True), True),
        (AuthSettings(issuers=[IssuerSettings(issuer="https://idp", jwks_url="https://idp/jwks")]), True),
    ],
)
def test_what_turns_authentication_on(auth: AuthSettings, configured: bool) -> None:
    assert auth.configured is configured


def test_an_issuer_needs_exactly_one_key_source_and_never_alg_none() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        IssuerSettings(issuer="https://idp")
    with pytest.raises(ValueError, match="exactly one"):
        IssuerSettings(issuer="https://idp", jwks_url="https://idp/jwks", keys=[{"kty": "EC"}])
    with pytest.raises(ValueError, match="none"):
        IssuerSettings(issuer="https://idp", jwks_url="https://idp/jwks", algorithms=["RS256", "none"])


def test_agent_tokens_cannot_be_allowed_to_live_longer_than_ten_minutes() -> None:
    with pytest.raises(ConfigError, match="agent_token_max_s"):
        load_settings(environ={"COLONNADE_AUTH__AGENT_TOKEN_MAX_S": "3600"})
