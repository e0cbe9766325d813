"""Backend secrets from the environment, by name."""

from __future__ import annotations

import pytest

from colonnade.adapters.secrets import EnvSecretResolver


@pytest.mark.parametrize(
    ("name", "variables"),
    [
        ("crm_token", ("COLONNADE_SECRET_CRM_TOKEN", "crm_token")),
        ("billing.api-key", ("COLONNADE_SECRET_BILLING_API_KEY", "billing.api-key")),
    ],
)
def test_variables_a_name_is_read_from(name: str, variables: tuple[str, str]) -> None:
    assert EnvSecretResolver.variables(name) == variables


async def test_prefixed_variable_wins_over_the_plain_name() -> None:
    resolver = EnvSecretResolver({"COLONNADE_SECRET_CRM_TOKEN": "prefixed", "crm_token": "plain"})

    assert await resolver.resolve("crm_token") == "prefixed"


async def test_plain_name_is_the_fallback() -> None:
    resolver = EnvSecretResolver({"CRM_TOKEN": "plain"})

    assert await resolver.resolve("CRM_TOKEN") == "plain"


async def test_value_is_trimmed_and_empty_counts_as_missing() -> None:
    resolver = EnvSecretResolver({"COLONNADE_SECRET_A": "  tok\n", "COLONNADE_SECRET_B": " \n", "B": ""})

    assert await resolver.resolve("a") == "tok"
    assert await resolver.resolve("b") is None
    assert await resolver.resolve("c") is None


async def test_reads_the_process_environment_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLONNADE_SECRET_FROM_ENV", "env-value")

    assert await EnvSecretResolver().resolve("from_env") == "env-value"


def test_how_to_set_names_both_variables() -> None:
    hint = EnvSecretResolver({}).how_to_set("erp.token")

    assert "COLONNADE_SECRET_ERP_TOKEN" in hint
    assert "erp.token" in hint
