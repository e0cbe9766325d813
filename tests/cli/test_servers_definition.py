"""`colonnade servers add --definition`: malformed text ends the command with one clear line, no traceback."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from colonnade.cli import app


@pytest.mark.parametrize(
    ("definition", "said"),
    [
        ("{bad", "is not valid JSON or YAML at line 1, column 5"),
        ("transport: [", "is not valid JSON or YAML"),
        ("[1, 2]", "must be a mapping of settings (transport, command, url, ...), not list"),
        ("just-a-word", "must be a mapping of settings (transport, command, url, ...), not str"),
    ],
)
def test_a_malformed_definition_is_refused_before_any_request(definition: str, said: str) -> None:
    # a port nothing listens on: the command must end before it tries to reach a gateway
    result = CliRunner().invoke(
        app, ["servers", "add", "x", "--definition", definition, "--url", "http://127.0.0.1:9"]
    )
    assert result.exit_code == 2, result.output
    assert said in " ".join(result.output.split()) and "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
