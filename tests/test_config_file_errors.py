"""A colonnade.yaml that cannot be read says where and how to fix it, in one line, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from colonnade.config import ConfigError, load_settings


def test_a_config_that_is_not_utf8_names_the_byte_line_and_column(tmp_path: Path) -> None:
    config = tmp_path / "colonnade.yaml"
    config.write_bytes("server:\n  host: caf\u00e9.local\n".encode("latin-1"))
    with pytest.raises(ConfigError) as raised:
        load_settings(config, environ={})
    (problem,) = raised.value.problems
    assert problem.startswith(f"{config}:2:12: is not UTF-8 text (byte 0xe9)"), problem
    assert "iconv -f latin1 -t utf-8 colonnade.yaml" in problem


def test_the_cli_prints_it_as_one_line(tmp_path: Path) -> None:
    config = tmp_path / "colonnade.yaml"
    config.write_bytes(b"server:\n  host: caf\xe9.local\n")
    done = subprocess.run(
        [str(Path(sys.executable).with_name("colonnade")), "--config", str(config), "serve"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert "Traceback" not in done.stderr + done.stdout
    assert ":2:12: is not UTF-8 text (byte 0xe9)" in " ".join((done.stderr + done.stdout).split())
