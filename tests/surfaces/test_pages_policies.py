"""`/ui/policies` on a governed gateway: the set in force, a reload that fails and one that works, the tests.

The policy directory is the test's own: a rule file and a `*_test.rego` beside it. Breaking the rule
file and reloading from the page keeps the set in force and shows the problem; fixing it and
reloading serves the new version; the test form runs its test rules. A consumer cannot read the page.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from colonnade.config import PolicySettings
from tests.support.governed import Governed, governed_gateway
from tests.support.page_login import csrf_token, person

pytestmark = pytest.mark.integration  # the gateway compiles the operator's policies in a child process

RULES = """package colonnade.authz
import rego.v1

deny contains "no writes on sundays" if {
	input.tool.side_effects == "write"
	input.time.weekday == "Sunday"
}
"""
TESTS = """package colonnade.authz_test
import rego.v1
import data.colonnade.authz

test_reads_pass if {
	count(authz.deny) == 0 with input as {"tool": {"side_effects": "read"}, "time": {"weekday": "Sunday"}}
}

test_sunday_writes_denied if {
    write := {"tool": {"side_effects": "write"}, "time": {"weekday": "Sunday"}}
    "no writes on sundays" in authz.deny with input as write
}
"""


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("page-policies")
    (directory / "rules.rego").write_text(RULES)
    (directory / "rules_test.rego").write_text(TESTS)
    return directory


@pytest.fixture(scope="module")
def governed(tmp_path_factory: pytest.TempPathFactory, folder: Path) -> Iterator[Governed]:
    settings = PolicySettings(directories=[folder], reload_interval_s=0)
    with governed_gateway(tmp_path_factory.mktemp("pages-policies-gw"), policy=settings) as running:
        yield running


def post(client: httpx2.Client, path: str) -> httpx2.Response:
    return client.post(path, data={"csrf_token": csrf_token(client.get("/ui/policies").text)})


def test_the_page_shows_the_set_and_runs_its_tests(governed: Governed) -> None:
    with person(governed, "sam", "security") as sam:
        page = sam.get("/ui/policies")
        tested = post(sam, "/ui/policies/test")
    assert page.status_code == 200 and '<span class="ok" id="serving">yes</span>' in page.text
    assert "rules.rego" in page.text and 'id="reload"' in page.text
    assert tested.status_code == 200 and '<p id="tests-passed">2/2 passed</p>' in tested.text
    assert set(re.findall(r'data-outcome="(\w+)"', tested.text)) == {"pass"}


def test_a_broken_reload_keeps_the_set_and_a_fixed_one_serves(governed: Governed, folder: Path) -> None:
    version = governed.running.gateway.governance.policy.version  # type: ignore[union-attr]
    with person(governed, "sam", "security") as sam:
        (folder / "rules.rego").write_text(RULES + "\ndeny contains x if {\n")
        broken = post(sam, "/ui/policies/reload")
        assert broken.status_code == 422 and "keeps serving" in broken.text and 'id="problem"' in broken.text
        assert governed.running.gateway.governance.policy.version == version  # type: ignore[union-attr]
        (folder / "rules.rego").write_text(RULES + "\n# fixed\n")
        fixed = post(sam, "/ui/policies/reload")
    assert fixed.status_code == 200 and "Reloaded: version" in fixed.text
    assert governed.running.gateway.governance.policy.version != version  # type: ignore[union-attr]


def test_a_consumer_cannot_read_or_reload(governed: Governed) -> None:
    with person(governed, "erin", "consumer") as erin:
        page = erin.get("/ui/policies")
        token = csrf_token(erin.get("/ui/catalog").text)
        reload = erin.post("/ui/policies/reload", data={"csrf_token": token})
    assert page.status_code == 403 and "colonnade:security:read" in page.text
    assert reload.status_code == 403
