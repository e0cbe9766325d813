"""The environment and file providers, the reference syntax in contracts and colonnade.yaml, and the
resolver that sends each reference to its provider (bare names stay the environment's)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from pydantic import ValidationError

from colonnade.adapters.secrets import EnvSecretResolver
from colonnade.config import McpServerSettings, TokenExchangeSettings, UpstreamAuth, split_secret_reference
from colonnade.contracts.model import BackendAuth
from colonnade.governance.secrets import EnvProvider, FileProvider, Secrets

ENVIRON = {"COLONNADE_SECRET_CRM_TOKEN": "from-env", "plain.name": "plain"}


@pytest.mark.parametrize(
    ("written", "held"),
    [
        ("CRM_TOKEN", "CRM_TOKEN"),
        ("store:crm-token", "store:crm-token"),
        ("env:CRM_TOKEN", "env:CRM_TOKEN"),
        ("file:/run/secrets/crm", "file:/run/secrets/crm"),
        ({"provider": "store", "name": "crm-token"}, "store:crm-token"),
        ({"provider": "file", "path": "/run/secrets/crm"}, "file:/run/secrets/crm"),
        ({"name": "CRM_TOKEN"}, "env:CRM_TOKEN"),
    ],
)
def test_a_reference_is_held_as_one_string_in_contracts_and_settings(written: object, held: str) -> None:
    assert BackendAuth.model_validate({"type": "bearer", "secret": written}).secret == held
    assert UpstreamAuth.model_validate({"secret": written}).secret == held
    server = McpServerSettings.model_validate(
        {"name": "files", "transport": "stdio", "command": "x", "secret_env": {"TOKEN": written}}
    )
    assert server.secret_env["TOKEN"] == held


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("sk live with spaces", "not a secret reference"),
        ("store:bad name", "not a secret reference"),
        ({"provider": "vault", "name": "x"}, "not one of env, file, store"),
        ({"provider": "file", "name": "x"}, "needs `path`"),
        ({"provider": "file", "path": "/run/secrets/crm", "name": "x"}, "`provider` and `path`, not name"),
        ({"provider": "store", "name": "x", "tenant": "acme"}, "not tenant"),
    ],
)
def test_a_bad_reference_says_what_to_write(written: object, said: str) -> None:
    with pytest.raises(ValidationError, match=said):
        TokenExchangeSettings.model_validate(
            {"token_endpoint": "http://127.0.0.1:1/token", "client_id": "gw", "client_secret": written}
        )


def test_a_bare_name_or_an_unknown_prefix_is_the_environments() -> None:
    assert split_secret_reference("CRM_TOKEN") == ("env", "CRM_TOKEN")
    assert split_secret_reference("store:x") == ("store", "x")
    assert split_secret_reference("file:/a:b") == ("file", "/a:b")


async def test_the_resolver_sends_each_reference_to_its_provider(tmp_path: Path) -> None:
    secret_file = tmp_path / "crm"
    secret_file.write_text("from-file\n", encoding="utf-8")
    secret_file.chmod(0o600)
    resolver = Secrets({"env": EnvProvider(ENVIRON), "file": FileProvider()})
    assert await resolver.resolve("CRM_TOKEN", tenant="acme") == "from-env"
    assert await resolver.resolve("env:crm-token") == "from-env"
    assert await resolver.resolve("plain.name") == "plain"
    assert await resolver.resolve(f"file:{secret_file}") == "from-file"
    assert await resolver.resolve("store:crm-token") is None  # no database, no store provider
    assert "database" in resolver.how_to_set("store:crm-token")
    # the adapters' default (no vault wired) reads the environment the same way
    assert await EnvSecretResolver(ENVIRON).resolve("env:CRM_TOKEN") == "from-env"
    assert await EnvSecretResolver(ENVIRON).resolve("store:CRM_TOKEN") is None


async def test_a_missing_or_unreadable_file_is_said_plainly(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    provider = FileProvider(base=tmp_path)
    caplog.set_level(logging.WARNING, "colonnade.governance.secrets.providers")
    assert await provider.resolve("absent", tenant=None) is None
    assert f"secret file {tmp_path / 'absent'} does not exist" in caplog.text
    assert "chmod 600" in provider.how_to_set("absent", tenant=None)
    folder = tmp_path / "a-folder"
    folder.mkdir()
    assert await provider.resolve(str(folder), tenant=None) is None
    assert "cannot be read" in caplog.text
    empty = tmp_path / "empty"
    empty.write_text("\n", encoding="utf-8")
    empty.chmod(0o600)
    assert await provider.resolve("empty", tenant=None) is None


async def test_a_file_others_may_read_is_used_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    shared = tmp_path / "shared"
    shared.write_text("value", encoding="utf-8")
    shared.chmod(0o644)
    provider = FileProvider()
    caplog.set_level(logging.WARNING, "colonnade.governance.secrets.providers")
    assert await provider.resolve(str(shared), tenant=None) == "value"
    assert await provider.resolve(str(shared), tenant=None) == "value"
    assert caplog.text.count("readable by group or others") == 1
