"""`servers:` in colonnade.yaml: each problem named with its key, and secrets only by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from colonnade.config import ConfigError, load_settings


def problems(tmp_path: Path, yaml_text: str, environ: dict[str, str] | None = None) -> list[str]:
    path = tmp_path / "colonnade.yaml"
    path.write_text(yaml_text)
    with pytest.raises(ConfigError) as caught:
        load_settings(path, environ=environ or {})
    return caught.value.problems


def test_a_full_server_list_loads(tmp_path: Path) -> None:
    path = tmp_path / "colonnade.yaml"
    path.write_text(
        """
servers:
  - name: files
    tenant: acme
    transport: stdio
    command: npx
    args: [server-filesystem, /data]
    env: {LOG: "1"}
    secret_env: {API_TOKEN: files.token}
    start: lazy
    deny_tools: [move_file]
    tools:
      write_file: {requires_human_approval: true, side_effects: destructive}
  - name: search
    transport: http
    url: https://search.example.com/mcp
    auth: {type: header, header: X-Api-Key, secret: SEARCH_KEY}
    call_timeout_s: 5
"""
    )
    settings = load_settings(path, environ={})
    files, search = settings.servers
    assert (files.tenant, files.start, files.secret_env) == ("acme", "lazy", {"API_TOKEN": "files.token"})
    assert files.tools["write_file"].side_effects == "destructive"
    assert search.auth is not None and (search.auth.header, search.auth.secret) == ("X-Api-Key", "SEARCH_KEY")
    assert search.call_timeout_s == 5


def test_transport_fields_must_match_the_transport(tmp_path: Path) -> None:
    found = problems(
        tmp_path,
        """
servers:
  - {name: a, transport: stdio}
  - {name: b, transport: http}
  - {name: c, transport: http, url: "http://x/mcp", command: run}
""",
    )
    assert any("servers.0" in p and "needs `command`" in p for p in found)
    assert any("servers.1" in p and "needs `url`" in p for p in found)
    assert any("servers.2" in p and "are for stdio servers" in p for p in found)


def test_names_are_unique_and_secrets_are_names(tmp_path: Path) -> None:
    found = problems(
        tmp_path,
        """
servers:
  - {name: a, transport: stdio, command: x}
  - {name: a, transport: http, url: "http://x/mcp", auth: {secret: "not a name!"}}
""",
    )
    assert any("servers.1.auth.secret" in p for p in found)
    found = problems(
        tmp_path,
        "servers:\n  - {name: a, transport: stdio, command: x}\n  - {name: a, transport: http, url: 'http://y'}\n",
    )
    assert any("given more than once: a" in p for p in found)


def test_servers_come_from_the_environment_too(tmp_path: Path) -> None:
    environ = {"COLONNADE_SERVERS": '[{"name": "t", "transport": "stdio", "command": "mcp-server-time"}]'}
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    assert [s.name for s in load_settings(empty, environ=environ).servers] == ["t"]
    found = problems(tmp_path, "servers: []\n", {"COLONNADE_SERVERS": '[{"name": "t", "transport": "ftp"}]'})
    assert any("servers.0.transport" in p and "'stdio' or 'http'" in p for p in found)
