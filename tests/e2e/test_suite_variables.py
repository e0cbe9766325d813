"""The variables that steer the test suite must not reach the gateway as settings.

The gateway reads every `COLONNADE_*` variable as a setting and refuses unknown ones; a test
switch in that namespace (as `COLONNADE_TEST_SKIP_POSTGRES` once was) made every gateway an
end-to-end test starts exit with "unknown setting".
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from colonnade.config import ENV_PREFIX
from tests.e2e.conftest import COLONNADE
from tests.support.suite_env import TEST_VARIABLES

pytestmark = pytest.mark.e2e


def test_suite_variables_live_outside_the_settings_namespace() -> None:
    assert all(not name.startswith(ENV_PREFIX) for name in TEST_VARIABLES)


def test_a_gateway_command_runs_with_every_suite_variable_set(tmp_path: Path) -> None:
    env = {**os.environ, **dict.fromkeys(TEST_VARIABLES, "1"), "COLONNADE_DATA_DIR": str(tmp_path / "data")}
    env.pop("COLONNADE_DATABASE_URL", None)
    run = subprocess.run(
        [str(COLONNADE), "contract", "list"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert "unknown setting" not in run.stderr


@pytest.mark.parametrize("document", ["README.md", "docs/configuration.md", "tests/support/databases.py"])
def test_no_document_names_a_test_variable_inside_the_settings_namespace(document: str) -> None:
    text = (Path(__file__).resolve().parents[2] / document).read_text(encoding="utf-8")
    assert f"{ENV_PREFIX}TEST_" not in text
