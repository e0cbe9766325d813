"""`/ui/policies`: the policy set in force, its last load problem, and the forms to reload and test it.

Reading needs `colonnade:security:read`, reloading `colonnade:security:write` (as REST's
`GET /v1/policy` and `POST /v1/policy/reload`). The tests are the `test_` rules of the policy
directories' `*_test.rego` files, what `colonnade policy test` runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from colonnade.surfaces.pages.html import Child, Html, join, tag
from colonnade.surfaces.pages.layout import POLICIES_PATH, Visitor, document, post_button

__all__ = ["TestRow", "policies_page"]

TestRow = tuple[str, str, str]
"""(file, test rule, pass | fail | error)."""


def policies_page(
    status: Mapping[str, Any] | None,
    *,
    visitor: Visitor | None,
    may_reload: bool,
    notice: Child = None,
    tests: Sequence[TestRow] | None = None,
) -> Html:
    """`status` is the gate's (None: this gateway runs no policies)."""
    can_post = visitor is not None and visitor.csrf_token is not None
    if status is None:
        body: Html = tag(
            "p", "This gateway runs no policies (policy.enabled is off).", class_="muted", id="none"
        )
    else:
        body = join(_status(status), _forms(visitor, can_post, may_reload), _tests(tests))
    return document("Policies", tag("h1", "Policies"), notice, body, section="Policies", visitor=visitor)


def _status(status: Mapping[str, Any]) -> Html:
    serving = status.get("serving")
    facts: list[tuple[str, Child]] = [
        (
            "Serving",
            tag("span", "yes" if serving else "no", class_="ok" if serving else "broken", id="serving"),
        ),
        ("Version", tag("code", status.get("version") or "—")),
        ("Loaded at", status.get("loaded_at") or "—"),
        ("Directories", join(*(join(tag("code", d), " ") for d in status.get("directories", [])))),
    ]
    if status.get("problem"):
        facts.append(("Last problem", tag("span", status["problem"], class_="broken", id="problem")))
        facts.append(("Problem at", status.get("problem_at") or "—"))
    files = tag(
        "ul",
        *(
            tag("li", tag("code", Path(f).name), " ", tag("span", f, class_="muted"))
            for f in status.get("files", [])
        ),
    )
    return join(
        tag("dl", *(join(tag("dt", k), tag("dd", v)) for k, v in facts), class_="facts"),
        tag("h2", "Files"),
        files,
    )


def _forms(visitor: Visitor | None, can_post: bool, may_reload: bool) -> Html | None:
    if not can_post:
        return tag("p", "Log in to reload or test the policies.", class_="muted")
    reload = post_button(visitor, POLICIES_PATH + "/reload", "Reload the policy files", id="reload")
    test = post_button(visitor, POLICIES_PATH + "/test", "Run the policy tests", id="test")
    return join(tag("h2", "Act"), reload if may_reload else None, test)


def _tests(tests: Sequence[TestRow] | None) -> Html | None:
    if tests is None:
        return None
    passed = sum(1 for _, _, outcome in tests if outcome == "pass")
    rows = (
        tag(
            "tr",
            tag("td", tag("code", Path(file).name)),
            tag("td", tag("code", name)),
            tag("td", outcome, class_="ok" if outcome == "pass" else "broken"),
            data_outcome=outcome,
        )
        for file, name, outcome in tests
    )
    head = tag("tr", tag("th", "File"), tag("th", "Test"), tag("th", "Result"))
    return join(
        tag("h2", "Tests"),
        tag("p", f"{passed}/{len(tests)} passed", id="tests-passed"),
        tag("table", head, *rows, id="tests")
        if tests
        else tag("p", "No test_ rule in any *_test.rego file.", class_="muted"),
    )
