"""A misspelt setting in colonnade.yaml or the environment names the setting it probably meant."""

from __future__ import annotations

from pathlib import Path

import pytest

from colonnade.config import ConfigError, load_settings


def test_a_misspelt_key_gets_a_suggestion_at_every_depth(tmp_path: Path) -> None:
    config = tmp_path / "colonnade.yaml"
    config.write_text(
        "databse_url: sqlite+aiosqlite:///x.db\n"
        "server:\n  prot: 9000\n  tls:\n    cert_fle: c.pem\n"
        "servers:\n  - {name: a, transport: stdio, command: ls, comand: x,"
        " tools: {t: {requires_human_aproval: true}}}\n"
        "zzzz: 1\n"
    )
    with pytest.raises(ConfigError) as raised:
        load_settings(config, environ={"COLONNADE_SERVER__HOTS": "0.0.0.0"})
    problems = "\n".join(raised.value.problems)
    for typo, meant in [
        ("databse_url", "database_url"),
        ("server.prot", "port"),
        ("server.tls.cert_fle", "cert_file"),
        ("servers.0.comand", "command"),
        ("servers.0.tools.t.requires_human_aproval", "requires_human_approval"),  # past a map's key
        ("server.hots", "host"),
    ]:
        assert f"{typo}: unknown setting (did you mean {meant!r}?" in problems, problems
    assert "zzzz: unknown setting (check the spelling; see docs/configuration.md)" in problems  # no guess
    assert "comand: unknown setting (did you mean 'command'? check the spelling; see docs/servers.md)" in (
        problems
    )


def test_an_unknown_variable_is_named_not_blamed_on_a_missing_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No colonnade.yaml here: the typo is in the variable, and the problem says which one."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as raised:
        load_settings(environ={"COLONNADE_SERVR__PORT": "9000"})
    assert raised.value.problems == [
        "environment COLONNADE_SERVR__PORT: servr: unknown setting (did you mean 'server'? check the"
        " spelling; see docs/configuration.md)"
    ]


def test_a_file_typo_next_to_a_variable_is_still_the_file_s(tmp_path: Path) -> None:
    config = tmp_path / "colonnade.yaml"
    config.write_text("server:\n  prot: 9000\n")
    with pytest.raises(ConfigError) as raised:
        load_settings(config, environ={"COLONNADE_LOG_LEVEL": "debug"})
    assert raised.value.problems[0].startswith(f"{config}: server.prot: unknown setting")
